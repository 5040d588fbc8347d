//! The machines a command keeps, as metalctl cuts a fleet: `--id`, `--partition`, `--rack`,
//! `--size`, and the allocation's `--project`, `--hostname`, `--role` and `--image`, each a
//! list of values compared whole, as metal-api's machine search compares them. A machine is
//! kept when each list given holds its value; one whose export does not say it is left out
//! once that list is given. Machines left out are counted and said, never silently dropped.
//! `--machine-id` is checked here too: it names the machine of a file that does not name its
//! own, and each file that does is reported once.

use std::collections::BTreeSet;

use crate::input::InputError;
use crate::log::{Format, MachineLog, Place};

/// The values each member a machine is cut by must have; empty lists keep all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keep {
    pub id: Vec<String>,
    pub partition: Vec<String>,
    pub rack: Vec<String>,
    pub size: Vec<String>,
    pub project: Vec<String>,
    pub hostname: Vec<String>,
    pub role: Vec<String>,
    pub image: Vec<String>,
    /// Whether `--machine-id` was given (a file that names its machines then says so).
    pub machine_id: bool,
}

/// A member a machine is cut by: its flag's name and how to find it in a machine.
struct Cut {
    flag: &'static str,
    of: fn(&MachineLog) -> Option<&str>,
}

fn place(log: &MachineLog) -> Option<&Place> {
    log.machine_info.place.as_deref()
}

/// Every cut, in the order the note names them.
const CUTS: [Cut; 8] = [
    Cut {
        flag: "id",
        of: |log| Some(log.machine.as_str()),
    },
    Cut {
        flag: "partition",
        of: |log| place(log)?.partition.as_deref(),
    },
    Cut {
        flag: "rack",
        of: |log| place(log)?.rack.as_deref(),
    },
    Cut {
        flag: "size",
        of: |log| place(log)?.size.as_deref(),
    },
    Cut {
        flag: "project",
        of: |log| place(log)?.project.as_deref(),
    },
    Cut {
        flag: "hostname",
        of: |log| place(log)?.hostname.as_deref(),
    },
    Cut {
        flag: "role",
        of: |log| place(log)?.role.as_deref(),
    },
    Cut {
        flag: "image",
        of: |log| place(log)?.image.as_deref(),
    },
];

impl Keep {
    /// Whether every machine is kept.
    pub fn is_all(&self) -> bool {
        self.lists().all(|(_, values)| values.is_empty())
    }

    fn lists(&self) -> impl Iterator<Item = (&Cut, &Vec<String>)> {
        CUTS.iter().zip([
            &self.id,
            &self.partition,
            &self.rack,
            &self.size,
            &self.project,
            &self.hostname,
            &self.role,
            &self.image,
        ])
    }

    /// Whether the machine is kept, counted either way.
    pub fn take(&self, log: &MachineLog, kept: &mut Kept) -> bool {
        if self.machine_id && names_itself(log.format) && !kept.self_named.contains(&log.source) {
            kept.self_named.insert(log.source.clone());
        }
        let keeps = self.keeps(log);
        if keeps {
            kept.kept += 1;
        } else {
            kept.left_out += 1;
        }
        keeps
    }

    /// Whether the machine is kept.
    fn keeps(&self, log: &MachineLog) -> bool {
        self.lists().all(|(cut, values)| {
            values.is_empty() || (cut.of)(log).is_some_and(|v| values.iter().any(|w| w == v))
        })
    }

    /// What a run says of the machines it kept and left out.
    pub fn note(&self, kept: &Kept) -> InputError {
        let asked: Vec<String> = self
            .lists()
            .filter(|(_, values)| !values.is_empty())
            .map(|(cut, values)| format!("--{} {}", cut.flag, values.join(",")))
            .collect();
        let total = kept.kept + kept.left_out;
        let unsaid = if self
            .lists()
            .any(|(cut, v)| cut.flag != "id" && !v.is_empty())
        {
            " (a machine whose export does not say where it is counts as left out)"
        } else {
            ""
        };
        InputError::at(
            &asked.join(" "),
            0,
            format!(
                "kept {} of {total} machine{}; {} left out of every count{unsaid}",
                kept.kept,
                if total == 1 { "" } else { "s" },
                kept.left_out
            ),
        )
    }

    /// One error for each file that names its machines although `--machine-id` was given.
    pub fn misnamed(&self, kept: &Kept) -> Vec<InputError> {
        kept.self_named
            .iter()
            .map(|file| {
                InputError::at(
                    file,
                    0,
                    "--machine-id names the machine of a `machine logs` file, an event API response or a table; this file names its machines itself (use --id to pick machines)".to_string(),
                )
            })
            .collect()
    }
}

/// Whether a format carries its machines' ids, so that `--machine-id` has nothing to name.
fn names_itself(format: Format) -> bool {
    !matches!(format, Format::LogsJson | Format::EventApi | Format::Table)
}

/// How many machines were kept and left out, and the files that named their own machines
/// where `--machine-id` was given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kept {
    pub kept: u64,
    pub left_out: u64,
    pub self_named: BTreeSet<String>,
}

impl std::ops::AddAssign for Kept {
    fn add_assign(&mut self, other: Kept) {
        self.kept += other.kept;
        self.left_out += other.left_out;
        self.self_named.extend(other.self_named);
    }
}
