//! What a reading command works with, made once from the argument groups such commands share:
//! the rule set `--rules` names, the inputs the paths name, and what is counted (the window of
//! `--since`, `--until` and `--now`, the trend period). Each command is then the wiring of one
//! fold, one render call and its ending.

use anyhow::Result;

use crate::aggregate::Counting;
use crate::cli::{InputArgs, WindowArgs};
use crate::fleet::{Inputs, Pending, counted};
use crate::input::record::ReadMode;
use crate::rules::Ruleset;
use crate::window::Period;

/// The rule set and the inputs of one command's run.
pub(crate) struct Job {
    pub rules: Ruleset,
    pub inputs: Inputs,
}

impl Job {
    /// The rule set named `rules`, then the inputs (a bad rule set is told before the input
    /// paths are looked at).
    pub fn new(rules: &str, input: &InputArgs) -> Result<Job> {
        Ok(Job::with(rules, input, None, || Ok(()))?.0)
    }

    /// As [`Job::new`], the inputs read as `mode` asks where it is given (the audit reads the
    /// BMC and the allocation's networks: no other command reads them, nor pays for them).
    pub fn reading(rules: &str, input: &InputArgs, mode: Option<ReadMode>) -> Result<Job> {
        Ok(Job::with(rules, input, mode, || Ok(()))?.0)
    }

    /// The rule set alone, for a command that reads no input (`graph` of the rules).
    pub fn rules(rules: &str) -> Result<Ruleset> {
        Ruleset::resolve(rules)
    }

    /// The rule set, then what `first` reads — a baseline, a second rule set: a `-` among
    /// them takes standard input before an input path `-` can — then the inputs.
    pub fn with<T>(
        rules: &str,
        input: &InputArgs,
        mode: Option<ReadMode>,
        first: impl FnOnce() -> Result<T>,
    ) -> Result<(Job, T)> {
        let rules = Ruleset::resolve(rules)?;
        let first = first()?;
        let mut sources = input.sources();
        if let Some(mode) = mode {
            sources.options.mode = mode;
        }
        let inputs = Inputs::resolve(&sources)?;
        Ok((Job { rules, inputs }, first))
    }

    /// What the command counts: the window its arguments ask for (one more pass first where
    /// it counts back from the data's own clock), with the trend `period`; and the window as
    /// output will show it.
    pub fn counted(
        &self,
        window: &WindowArgs,
        period: Option<Period>,
    ) -> Result<(Counting, Pending)> {
        counted(&self.inputs, &window.spec(), period)
    }
}
