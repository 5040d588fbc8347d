//! The values the command line's options take, named as `-o`, `--format`, `--by` and the
//! rest spell them. The types are the crate's own (render's output formats, read from the
//! tables `render/format.rs` declares; the input formats; the issue types); only here do they
//! meet clap.

use clap::ValueEnum;
use clap::builder::PossibleValue;

use crate::aggregate::Breakdown;
use crate::input::Format;
use crate::issues::{IssueType, Severity};
use crate::render::format::{
    CheckFormat, DiffFormat, GraphFormat, IssuesFormat, LogFormat, OutputFormat, ProposeFormat,
    ReplayFormat, ReportFormat, TableFormat,
};
use crate::render::terminal::ColorChoice;
use crate::window::Period;

/// Implements [`ValueEnum`] for a type: each variant, its name on the command line and, where
/// `--help` says one, what it means.
macro_rules! values {
    ($ty:ty { $($variant:ident = $name:literal $(: $help:literal)?),* $(,)? }) => {
        impl ValueEnum for $ty {
            fn value_variants<'a>() -> &'a [Self] {
                &[$(Self::$variant),*]
            }

            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(match self {
                    $(Self::$variant => PossibleValue::new($name)$(.help($help))?,)*
                })
            }
        }
    };
}

/// Implements [`ValueEnum`] for output formats from the table each declares in
/// `render/format.rs` (clap's trait is not the crate's, so one generic impl cannot do it).
macro_rules! from_tables {
    ($($ty:ty),* $(,)?) => {
        $(impl ValueEnum for $ty {
            fn value_variants<'a>() -> &'a [Self] {
                <$ty as OutputFormat>::ALL
            }

            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(possible(*self))
            }
        })*
    };
}

/// An output format as clap lists it: its name, and its help where it has one.
fn possible(format: impl OutputFormat) -> PossibleValue {
    let value = PossibleValue::new(format.name());
    match format.help() {
        Some(help) => value.help(help),
        None => value,
    }
}

values!(ColorChoice {
    Auto = "auto": "On a terminal, unless `NO_COLOR` is set",
    Always = "always",
    Never = "never",
});

values!(Format {
    LogsJson = "logs-json": "`metalctl machine logs ID -o json` (an event array, maybe a `Recent last error` block)",
    DescribeJson = "describe-json": "`metalctl machine describe ID -o json` (one machine object)",
    ListJson = "list-json": "`metalctl machine list -o json` (an array of machine objects)",
    EventApi = "event-api": "metal-api's `GET /v1/machine/{id}/event` response (`{log, last_error_event, …}`)",
    ContainerDump = "container-dump": "metal-api's stored containers, a dump of the event table (one object or an array)",
    V2Json = "v2-json": "The v2 API's machines (`uuid`, `recentProvisioningEvents`; camelCase or snake_case)",
    Ndjson = "ndjson": "A raw event stream, one `{\"machine\", \"time\", \"event\", \"message\"}` a line, any order",
    Table = "table": "The table `metalctl machine logs ID` prints (also `-o wide`, `-o markdown`)",
});

values!(Period {
    Day = "day": "UTC days, `2025-09-16`",
    Week = "week": "ISO weeks, `2025-W38` (Monday to Sunday, UTC)",
});

values!(Breakdown {
    Day = "day": "Per UTC day, `2025-09-16` (a sparkline in the table)",
    Week = "week": "Per ISO week, `2025-W38` (Monday to Sunday, UTC)",
    Partition = "partition": "Per partition the machines are in",
    Rack = "rack": "Per rack",
    Size = "size": "Per size",
});

values!(Severity {
    Minor = "minor",
    Major = "major",
    Critical = "critical",
});

values!(IssueType {
    NoEventContainer = "no-event-container",
    NoPartition = "no-partition",
    LivelinessDead = "liveliness-dead",
    LivelinessUnknown = "liveliness-unknown",
    LivelinessNotAvailable = "liveliness-not-available",
    FailedMachineReclaim = "failed-machine-reclaim",
    Crashloop = "crashloop",
    LastEventError = "last-event-error",
    BmcWithoutMac = "bmc-without-mac",
    BmcWithoutIp = "bmc-without-ip",
    BmcInfoOutdated = "bmc-info-outdated",
    AsnNotUnique = "asn-not-unique",
    BmcNoDistinctIp = "bmc-no-distinct-ip",
    Stuck = "stuck",
    UnexpectedTransitions = "unexpected-transitions",
});

from_tables!(
    ReportFormat,
    DiffFormat,
    CheckFormat,
    GraphFormat,
    TableFormat,
    IssuesFormat,
    ReplayFormat,
    ProposeFormat,
    LogFormat,
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Each name reads back as its value, so that `-o NAME` and the help agree.
    fn round_trips<T: ValueEnum + PartialEq + std::fmt::Debug>() {
        for value in T::value_variants() {
            let name = value.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(&T::from_str(&name, false).unwrap(), value, "{name}");
        }
    }

    #[test]
    fn every_value_reads_back() {
        round_trips::<ColorChoice>();
        round_trips::<Format>();
        round_trips::<Period>();
        round_trips::<Severity>();
        round_trips::<IssueType>();
        round_trips::<ReportFormat>();
        round_trips::<DiffFormat>();
        round_trips::<CheckFormat>();
        round_trips::<GraphFormat>();
        round_trips::<TableFormat>();
        round_trips::<IssuesFormat>();
        round_trips::<ReplayFormat>();
        round_trips::<ProposeFormat>();
        round_trips::<LogFormat>();
    }

    #[test]
    fn input_format_names_are_the_ones_output_uses() {
        for format in Format::value_variants() {
            let name = format.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(name, format.name());
        }
    }

    #[test]
    fn issue_type_names_are_metal_apis() {
        for kind in IssueType::ALL {
            let name = kind.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(name, kind.id());
        }
    }
}
