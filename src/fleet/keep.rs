//! The machines a command keeps, as metalctl cuts a fleet: `--partition`, `--rack` and
//! `--size`, each a list of values. A machine is kept when each list given holds its value;
//! one whose export does not say where it is, is left out once any list is given. Machines
//! left out are counted and said, never silently dropped.

use crate::input::InputError;
use crate::log::{Dimension, MachineLog};

/// The values of each dimension a machine must have to be kept; empty lists keep all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keep {
    pub partition: Vec<String>,
    pub rack: Vec<String>,
    pub size: Vec<String>,
}

impl Keep {
    /// Whether every machine is kept.
    pub fn is_all(&self) -> bool {
        self.lists().all(|(_, values)| values.is_empty())
    }

    fn lists(&self) -> impl Iterator<Item = (Dimension, &Vec<String>)> {
        Dimension::ALL
            .into_iter()
            .zip([&self.partition, &self.rack, &self.size])
    }

    /// Whether the machine is kept, counted either way.
    pub fn take(&self, log: &MachineLog, kept: &mut Kept) -> bool {
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
        self.lists().all(|(dimension, values)| {
            values.is_empty()
                || log
                    .machine_info
                    .place
                    .as_deref()
                    .and_then(|p| p.of(dimension))
                    .is_some_and(|v| values.iter().any(|want| want == v))
        })
    }

    /// What a run says of the machines it kept and left out.
    pub fn note(&self, &Kept { kept, left_out }: &Kept) -> InputError {
        let asked: Vec<String> = self
            .lists()
            .filter(|(_, values)| !values.is_empty())
            .map(|(d, values)| format!("--{} {}", d.name(), values.join(",")))
            .collect();
        InputError::at(
            &asked.join(" "),
            0,
            format!(
                "kept {kept} of {} machine{}; {left_out} left out of every count (a machine whose export does not say where it is counts as left out)",
                kept + left_out,
                if kept + left_out == 1 { "" } else { "s" }
            ),
        )
    }
}

/// How many machines were kept and left out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Kept {
    pub kept: u64,
    pub left_out: u64,
}

impl std::ops::AddAssign for Kept {
    fn add_assign(&mut self, other: Kept) {
        self.kept += other.kept;
        self.left_out += other.left_out;
    }
}
