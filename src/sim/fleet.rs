//! A seeded fleet simulator shared by the generator (`examples/gen_fleet.rs`) and the criterion
//! benches: machines that provision, reboot, get reclaimed and misbehave as real fleets do,
//! replayed through metal-api's rules so every export shows what metal-api would have stored.

use crate::event::EventKind::{self, *};
use crate::replay::{Container, Replayer};
use crate::rules::Ruleset;
use chrono::{DateTime, TimeDelta, Utc};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One event as the machine sent it.
#[derive(Debug, Clone)]
pub struct SentEvent {
    pub time: DateTime<Utc>,
    pub event: EventKind,
    pub message: &'static str,
}

/// A simulated machine: what it sent, and what metal-api stored.
#[derive(Debug, Clone)]
pub struct SimMachine {
    pub id: String,
    pub sent: Vec<SentEvent>,
    pub container: Container,
}

fn message(event: EventKind, rng: &mut ChaCha8Rng) -> &'static str {
    match event {
        PxeBooting => "machine sent extended dhcp request",
        Preparing => [
            "starting metal-hammer version:\"v0.13.2\"",
            "starting metal-hammer version:\"v0.14.1\"",
        ][rng.random_range(0..2)],
        Registering => "start registering",
        Waiting => "waiting for allocation",
        Installing => "start installation",
        BootingNewKernel => "boot into distribution kernel",
        PhonedHome => "phoned home",
        PlannedReboot => {
            ["CYCLE", "RESET", "BIOS configuration requires a reboot"][rng.random_range(0..3)]
        }
        MachineReclaim => "free machine called",
        Crashed => [
            "installation failed: exit status 1",
            "metal-hammer failed: no network interface with lldp neighbor",
            "unable to fetch hardware: context deadline exceeded",
        ][rng.random_range(0..3)],
        Alive => "",
    }
}

/// How often a simulated machine does what real hardware does: the anomalies of a fleet, each
/// a probability per chance to do it.
#[derive(Debug, Clone, PartialEq)]
pub struct Habits {
    /// metal-hammer crash-loops in Preparing during a boot.
    pub crash_loop: f64,
    /// A boot crashes and starts again.
    pub crashed_boot: f64,
    /// A reinstall (after Phoned Home, before any Machine Reclaim): metal-hammer skips
    /// Waiting (metal-api#325).
    pub skip_waiting: f64,
    /// metal-core's buffered Phoned Home of the previous life arrives in Waiting (#630).
    pub late_phoned_home: f64,
    /// The machine reboots in Waiting without a Planned Reboot (#464).
    pub reboot_in_waiting: f64,
    /// The installation crashes.
    pub crashed_install: f64,
    /// metal-hammer's Alive ticker fires during its sleep after a Planned Reboot.
    pub alive_in_planned_reboot: f64,
    /// Of a phoned-home machine's next moves: a reboot without Planned Reboot (PXE Booting in
    /// Phoned Home, a reinstall by metal-api), besides Planned Reboot (45%) and reclaim.
    pub unannounced_reboot: f64,
    /// A reclaim the machine does not go down for.
    pub failed_reclaim: f64,
}

impl Default for Habits {
    /// The mix of the benches and the generator.
    fn default() -> Habits {
        Habits {
            crash_loop: 0.05,
            crashed_boot: 0.03,
            skip_waiting: 0.1,
            late_phoned_home: 0.1,
            reboot_in_waiting: 0.15,
            crashed_install: 0.04,
            alive_in_planned_reboot: 0.1,
            unannounced_reboot: 0.15,
            failed_reclaim: 0.05,
        }
    }
}

impl Habits {
    /// A machine that does nothing unusual: it provisions, reboots when told and is reclaimed.
    pub fn none() -> Habits {
        Habits {
            crash_loop: 0.0,
            crashed_boot: 0.0,
            skip_waiting: 0.0,
            late_phoned_home: 0.0,
            reboot_in_waiting: 0.0,
            crashed_install: 0.0,
            alive_in_planned_reboot: 0.0,
            unannounced_reboot: 0.0,
            failed_reclaim: 0.0,
        }
    }
}

/// Simulates one machine until metal-api holds `stored` events for it (or it stops).
struct Sim<'r> {
    habits: Habits,
    rng: ChaCha8Rng,
    time: DateTime<Utc>,
    sent: Vec<SentEvent>,
    replayer: Replayer<'r>,
    stored: usize,
    /// Phoned home, and not reclaimed since: a new boot is a reinstall.
    installed: bool,
}

impl Sim<'_> {
    fn send(&mut self, after_seconds: (i64, i64), event: EventKind) {
        let delay = self.rng.random_range(after_seconds.0..=after_seconds.1);
        self.time += TimeDelta::milliseconds(delay * 1000 + self.rng.random_range(0..1000));
        let message = message(event, &mut self.rng);
        let step = self.replayer.step(self.time, event, message, None, 0);
        match event {
            PhonedHome => self.installed = true,
            MachineReclaim => self.installed = false,
            _ => {}
        }
        if step.stored {
            self.stored += 1;
        }
        self.sent.push(SentEvent {
            time: self.time,
            event,
            message,
        });
    }

    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    /// PXE boot to Waiting (or straight to Installing), with the anomalies of real hardware.
    fn boot(&mut self) {
        for _ in 0..self.rng.random_range(1..=3) {
            self.send((1, 20), PxeBooting);
        }
        self.send((60, 120), Preparing);
        if self.chance(self.habits.crash_loop) {
            // A crash loop of metal-hammer: Preparing again and again.
            for _ in 0..self.rng.random_range(2..=6) {
                self.send((60, 150), Preparing);
            }
        }
        if self.chance(self.habits.crashed_boot) {
            self.send((30, 300), Crashed);
            return self.boot();
        }
        self.send((30, 90), Registering);
    }

    fn wait_and_install(&mut self) {
        // The chance is drawn either way, so that a fleet's other habits stay where they were.
        if self.chance(self.habits.skip_waiting) && self.installed {
            // A reinstall: metal-hammer installs right after registering (cmd/root.go).
            self.send((5, 30), Installing);
        } else {
            self.send((10, 40), Waiting);
            if self.chance(self.habits.late_phoned_home) {
                // Buffered phoned home: a late phone-home of the previous life.
                self.send((30, 240), PhonedHome);
            }
            for _ in 0..self.rng.random_range(0..4) {
                self.send((600, 7200), Alive);
            }
            if self.chance(self.habits.reboot_in_waiting) {
                // Rebooted while waiting: PXE Booting arrives in Waiting.
                self.send((3600, 86_400), PxeBooting);
                self.boot();
                return self.wait_and_install();
            }
            self.send((600, 86_400), Installing);
        }
        if self.chance(self.habits.crashed_install) {
            self.send((120, 600), Crashed);
            self.boot();
            return self.wait_and_install();
        }
        self.send((180, 400), BootingNewKernel);
        self.send((60, 240), PhonedHome);
    }

    fn run(&mut self, target: usize) {
        self.boot();
        self.wait_and_install();
        while self.stored < target && self.sent.len() < target * 20 {
            for _ in 0..self.rng.random_range(0..3) {
                self.send((3600, 86_400), PhonedHome);
            }
            let roll: f64 = self.rng.random();
            if roll < 0.45 {
                self.send((3600, 604_800), PlannedReboot);
                if self.chance(self.habits.alive_in_planned_reboot) {
                    self.send((5, 60), Alive);
                }
                if self.chance(0.6) {
                    self.send((120, 400), PhonedHome);
                    continue;
                }
                self.boot();
            } else if roll < 0.45 + self.habits.unannounced_reboot {
                // A reboot without Planned Reboot: PXE Booting arrives in Phoned Home.
                self.send((3600, 604_800), PxeBooting);
                self.boot();
            } else {
                self.send((3600, 604_800), MachineReclaim);
                if self.chance(self.habits.failed_reclaim) {
                    // The machine did not go down: a failed reclaim.
                    self.send((400, 900), PhonedHome);
                    self.send((3600, 7200), MachineReclaim);
                }
                self.boot();
            }
            self.wait_and_install();
        }
    }
}

fn uuid(rng: &mut ChaCha8Rng) -> String {
    let hex: String = (0..32)
        .map(|_| char::from_digit(rng.random_range(0..16), 16).unwrap())
        .collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// Simulates machine number `index` of the fleet seeded with `seed`; the same pair always
/// gives the same machine.
pub fn machine(seed: u64, index: u64, stored_target: usize, rules: &Ruleset) -> SimMachine {
    machine_with(seed, index, stored_target, rules, &Habits::default())
}

/// [`machine`], with these habits.
pub fn machine_with(
    seed: u64,
    index: u64,
    stored_target: usize,
    rules: &Ruleset,
    habits: &Habits,
) -> SimMachine {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let id = uuid(&mut rng);
    let start = DateTime::parse_from_rfc3339("2025-06-01T00:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
        + TimeDelta::seconds(rng.random_range(0..30 * 86_400));
    let mut sim = Sim {
        habits: habits.clone(),
        rng,
        time: start,
        sent: Vec::new(),
        replayer: Replayer::new(rules),
        stored: 0,
        installed: false,
    };
    sim.run(stored_target);
    let Sim { sent, replayer, .. } = sim;
    SimMachine {
        id,
        sent,
        container: replayer.finish(),
    }
}
