//! Why an unexpected pair happens: over the same occurrences `report` counts, how long the
//! machine sat in the state before (the gap since its previous stored step), which stored
//! events came just before and just after, on which days, and on which machines. Per-machine
//! results add up with `+=`, like the report's tallies.

use std::collections::{BTreeMap, HashMap};
use std::ops::AddAssign;

use chrono::{DateTime, NaiveDate, Utc};

use crate::aggregate::{Counting, Occurrence, PairTally, Summary};
use crate::diagnose::Judged;
use crate::event::{EventKind, Pair};
use crate::replay::{Handling, Step, Trace};
use crate::window::Window;

/// How many example machines a pair keeps.
pub const EXAMPLES: usize = 5;
/// How many of the commonest before/after sequences a pair shows.
pub const SEQUENCES: usize = 5;

/// The context of one unexpected pair across the fleet.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PairContext {
    /// The same tally `report` keeps, so the two always agree.
    pub tally: Option<PairTally>,
    /// Occurrences that are no step of the replay (an exported last error event outside
    /// the log): they have no gap and no sequences.
    pub without_context: u64,
    /// The gap before each occurrence that has one, in milliseconds.
    pub gaps_ms: Vec<i64>,
    /// The event names of the stored steps just before / after, oldest first, and how often.
    pub before: HashMap<Vec<EventKind>, u64>,
    pub after: HashMap<Vec<EventKind>, u64>,
    /// Occurrences per UTC day.
    pub by_day: BTreeMap<NaiveDate, u64>,
    /// The first occurrence on each of the smallest machine ids.
    pub examples: BTreeMap<String, DateTime<Utc>>,
}

/// Statistics of the gaps, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GapStats {
    pub n: usize,
    pub min: f64,
    /// The lower median: sorted[(n−1)/2].
    pub median: f64,
    /// Nearest rank: sorted[⌈0.9·n⌉−1].
    pub p90: f64,
    pub max: f64,
}

impl PairContext {
    /// The example machines by their first occurrence, earliest first (then by id).
    pub fn examples_by_time(&self) -> Vec<(&str, DateTime<Utc>)> {
        let mut examples: Vec<_> = self
            .examples
            .iter()
            .map(|(machine, first)| (machine.as_str(), *first))
            .collect();
        examples.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(b.0)));
        examples
    }

    /// The gap statistics, where any occurrence has a gap.
    pub fn gap_stats(&self) -> Option<GapStats> {
        let mut sorted = self.gaps_ms.clone();
        sorted.sort_unstable();
        let n = sorted.len();
        let seconds = |ms: i64| ms as f64 / 1000.0;
        (n > 0).then(|| GapStats {
            n,
            min: seconds(sorted[0]),
            median: seconds(sorted[(n - 1) / 2]),
            p90: seconds(sorted[(9 * n).div_ceil(10) - 1]),
            max: seconds(sorted[n - 1]),
        })
    }

    /// How many occurrences have context (are steps of the replay).
    pub fn with_context(&self) -> u64 {
        self.tally.as_ref().map_or(0, |t| t.count) - self.without_context
    }

    fn merge(&mut self, other: PairContext) {
        match (&mut self.tally, other.tally) {
            (Some(mine), Some(theirs)) => mine.merge(theirs),
            (slot @ None, theirs) => *slot = theirs,
            (_, None) => {}
        }
        self.without_context += other.without_context;
        self.gaps_ms.extend(other.gaps_ms);
        for (mine, theirs) in [
            (&mut self.before, other.before),
            (&mut self.after, other.after),
        ] {
            for (sequence, n) in theirs {
                *mine.entry(sequence).or_default() += n;
            }
        }
        for (day, n) in other.by_day {
            *self.by_day.entry(day).or_default() += n;
        }
        for (machine, time) in other.examples {
            keep_example(&mut self.examples, machine, time);
        }
    }
}

/// The most common sequences, top [`SEQUENCES`] by count; ties by the sequence, name by name.
pub fn top_sequences(sequences: &HashMap<Vec<EventKind>, u64>) -> Vec<(&Vec<EventKind>, u64)> {
    let mut sorted: Vec<_> = sequences.iter().map(|(s, n)| (s, *n)).collect();
    sorted.sort_by(|a, b| {
        b.1.cmp(&a.1).then_with(|| {
            let names = |s: &Vec<EventKind>| s.iter().map(|e| e.name()).collect::<Vec<_>>();
            names(a.0).cmp(&names(b.0))
        })
    });
    sorted.truncate(SEQUENCES);
    sorted
}

fn keep_example(
    examples: &mut BTreeMap<String, DateTime<Utc>>,
    machine: String,
    time: DateTime<Utc>,
) {
    let entry = examples.entry(machine).or_insert(time);
    *entry = (*entry).min(time);
    while examples.len() > EXAMPLES {
        examples.pop_last();
    }
}

/// Everything `explain` says about a fleet.
#[derive(Debug, Clone, Default)]
pub struct Explanation {
    /// The report's summary of the same replay (inputs, pairs).
    pub summary: Summary,
    pub pairs: BTreeMap<Pair, PairContext>,
}

/// Which pairs to explain, and how much context to take.
#[derive(Debug, Clone)]
pub struct ExplainOptions {
    /// Only these pairs; every pair when empty.
    pub only: Vec<Pair>,
    /// How many stored steps before and after.
    pub context: usize,
    /// Only occurrences in this window count.
    pub window: Window,
}

impl Explanation {
    /// Folds one judged machine in: the report's tallies and each occurrence's context.
    pub fn add(&mut self, judged: &Judged, counting: &Counting, options: &ExplainOptions) {
        let mut summary = Summary::default();
        summary.add(judged, counting);
        self.add_trace(judged.trace(), summary, options);
    }

    /// Folds one machine's trace in, with its share of the report's tallies.
    pub(crate) fn add_trace(&mut self, trace: &Trace, summary: Summary, options: &ExplainOptions) {
        self.summary += summary;
        let stored: Vec<usize> = (0..trace.steps.len())
            .filter(|&i| trace.steps[i].stored)
            .collect();
        let wanted = |step: &Step| {
            options.only.is_empty() || options.only.contains(&(step.from, step.event))
        };
        let mut seen = Vec::new();
        let occurrences = trace
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| (Some(i), s))
            .chain(trace.last_error_only.iter().map(|s| (None, s)));
        for (index, step) in occurrences {
            if step.handling != Handling::Unexpected
                || !wanted(step)
                || !options.window.contains(step.time)
            {
                continue;
            }
            let key = (step.from, step.event);
            let first_on_machine = !seen.contains(&key);
            if first_on_machine {
                seen.push(key);
            }
            let context = self.pairs.entry(key).or_default();
            context
                .tally
                .get_or_insert_with(|| PairTally::new(step.time))
                .observe(&Occurrence::of(step, trace), first_on_machine);
            *context.by_day.entry(step.time.date_naive()).or_default() += 1;
            keep_example(&mut context.examples, trace.machine.clone(), step.time);
            let Some(index) = index else {
                context.without_context += 1;
                continue;
            };
            // Stored steps strictly before and after this one.
            let split = stored.partition_point(|&s| s < index);
            let before = &stored[split.saturating_sub(options.context)..split];
            let after_start = stored[split..]
                .iter()
                .position(|&s| s > index)
                .map_or(stored.len(), |p| split + p);
            let after = &stored[after_start..(after_start + options.context).min(stored.len())];
            if let Some(&previous) = stored[..split].last() {
                let gap = step.time - trace.steps[previous].time;
                context.gaps_ms.push(gap.num_milliseconds());
            }
            let names = |indexes: &[usize]| indexes.iter().map(|&i| trace.steps[i].event).collect();
            *context.before.entry(names(before)).or_default() += 1;
            *context.after.entry(names(after)).or_default() += 1;
        }
    }

    /// The explained pairs in the report's order: most frequent first, then state and event.
    pub fn pairs_by_count(&self) -> Vec<(&Pair, &PairContext)> {
        let mut sorted: Vec<_> = self.pairs.iter().collect();
        let count = |c: &PairContext| c.tally.as_ref().map_or(0, |t| t.count);
        sorted.sort_by(|a, b| count(b.1).cmp(&count(a.1)).then(a.0.cmp(b.0)));
        sorted
    }
}

impl AddAssign for Explanation {
    fn add_assign(&mut self, other: Explanation) {
        self.summary += other.summary;
        for (key, context) in other.pairs {
            self.pairs.entry(key).or_default().merge(context);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gap_statistics_use_the_lower_median_and_the_nearest_rank() {
        let context = PairContext {
            gaps_ms: vec![4000, 1000, 3000, 2000, 10_000, 5000, 6000, 7000, 8000, 9000],
            ..PairContext::default()
        };
        let stats = context.gap_stats().unwrap();
        assert_eq!(stats.n, 10);
        assert_eq!(stats.min, 1.0);
        assert_eq!(stats.median, 5.0, "sorted[(10-1)/2] = sorted[4]");
        assert_eq!(stats.p90, 9.0, "sorted[ceil(9)-1] = sorted[8]");
        assert_eq!(stats.max, 10.0);
        let one = PairContext {
            gaps_ms: vec![1500],
            ..PairContext::default()
        };
        let stats = one.gap_stats().unwrap();
        assert_eq!((stats.median, stats.p90), (1.5, 1.5));
        assert!(PairContext::default().gap_stats().is_none());
    }

    #[test]
    fn sequences_rank_by_count_then_by_name() {
        use EventKind::*;
        let sequences = HashMap::from([
            (vec![Waiting], 2),
            (vec![Registering, Waiting], 2),
            (vec![Preparing], 5),
        ]);
        let top = top_sequences(&sequences);
        assert_eq!(top[0], (&vec![Preparing], 5));
        assert_eq!(
            top[1],
            (&vec![Registering, Waiting], 2),
            "\"Registering\" < \"Waiting\""
        );
        assert_eq!(top[2], (&vec![Waiting], 2));
    }
}
