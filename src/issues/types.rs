//! The issue types: metal-api's thirteen (cmd/metal-api/internal/issues/*.go, their ids,
//! severities, descriptions and links as its `Spec()`s say) and fsmlog's two, and which
//! export each needs to be judged.

use std::fmt;

/// How bad an issue is (metal-api's severities).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Minor,
    Major,
    Critical,
}

impl Severity {
    /// metal-api's spelling.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Minor => "minor",
            Severity::Major => "major",
            Severity::Critical => "critical",
        }
    }
}

/// The kinds of issue, in the order output lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IssueType {
    NoEventContainer,
    NoPartition,
    LivelinessDead,
    LivelinessUnknown,
    LivelinessNotAvailable,
    FailedMachineReclaim,
    Crashloop,
    LastEventError,
    BmcWithoutMac,
    BmcWithoutIp,
    BmcInfoOutdated,
    AsnNotUnique,
    BmcNoDistinctIp,
    Stuck,
    UnexpectedTransitions,
}

/// What an export must hold for a type to be judged of a machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Needs {
    /// A machine export (describe, list, ipmi, v2, the event API, a container dump).
    MachineExport,
    /// A v1 machine object (`metalctl machine describe`, `list` or `ipmi`).
    MachineObject,
    /// A v1 machine object whose `allocation` is there (`null` or an object).
    Allocation,
    /// `metalctl machine ipmi -o json` (its `ipmi` object).
    Ipmi,
    /// Events, or the flags an export recorded: every export.
    Events,
}

impl IssueType {
    /// Every type, in output order.
    pub const ALL: [IssueType; 15] = [
        IssueType::NoEventContainer,
        IssueType::NoPartition,
        IssueType::LivelinessDead,
        IssueType::LivelinessUnknown,
        IssueType::LivelinessNotAvailable,
        IssueType::FailedMachineReclaim,
        IssueType::Crashloop,
        IssueType::LastEventError,
        IssueType::BmcWithoutMac,
        IssueType::BmcWithoutIp,
        IssueType::BmcInfoOutdated,
        IssueType::AsnNotUnique,
        IssueType::BmcNoDistinctIp,
        IssueType::Stuck,
        IssueType::UnexpectedTransitions,
    ];

    /// The type's id, as metal-api names it (`stuck` and `unexpected-transitions` are
    /// fsmlog's own).
    pub fn id(self) -> &'static str {
        match self {
            IssueType::NoEventContainer => "no-event-container",
            IssueType::NoPartition => "no-partition",
            IssueType::LivelinessDead => "liveliness-dead",
            IssueType::LivelinessUnknown => "liveliness-unknown",
            IssueType::LivelinessNotAvailable => "liveliness-not-available",
            IssueType::FailedMachineReclaim => "failed-machine-reclaim",
            IssueType::Crashloop => "crashloop",
            IssueType::LastEventError => "last-event-error",
            IssueType::BmcWithoutMac => "bmc-without-mac",
            IssueType::BmcWithoutIp => "bmc-without-ip",
            IssueType::BmcInfoOutdated => "bmc-info-outdated",
            IssueType::AsnNotUnique => "asn-not-unique",
            IssueType::BmcNoDistinctIp => "bmc-no-distinct-ip",
            IssueType::Stuck => "stuck",
            IssueType::UnexpectedTransitions => "unexpected-transitions",
        }
    }

    /// How bad it is.
    pub fn severity(self) -> Severity {
        match self {
            IssueType::FailedMachineReclaim => Severity::Critical,
            IssueType::NoEventContainer
            | IssueType::NoPartition
            | IssueType::LivelinessDead
            | IssueType::LivelinessUnknown
            | IssueType::Crashloop
            | IssueType::BmcWithoutMac
            | IssueType::BmcWithoutIp
            | IssueType::BmcInfoOutdated
            | IssueType::BmcNoDistinctIp
            | IssueType::Stuck => Severity::Major,
            IssueType::LivelinessNotAvailable
            | IssueType::LastEventError
            | IssueType::AsnNotUnique
            | IssueType::UnexpectedTransitions => Severity::Minor,
        }
    }

    /// metal-api's description (fsmlog's for its own two).
    pub fn description(self) -> &'static str {
        match self {
            IssueType::NoEventContainer => "machine has no event container",
            IssueType::NoPartition => "machine with no partition",
            IssueType::LivelinessDead => "the machine is not sending events anymore",
            IssueType::LivelinessUnknown => {
                "the machine is not sending LLDP alive messages anymore"
            }
            IssueType::LivelinessNotAvailable => "the machine liveliness is not available",
            IssueType::FailedMachineReclaim => "machine phones home but not allocated",
            IssueType::Crashloop => "machine is in a provisioning crash loop (⭕)",
            IssueType::LastEventError => {
                "the machine had an error during the provisioning lifecycle"
            }
            IssueType::BmcWithoutMac => "BMC has no mac address",
            IssueType::BmcWithoutIp => "BMC has no ip address",
            IssueType::BmcInfoOutdated => {
                "BMC has not been updated from either metal-hammer or metal-bmc"
            }
            IssueType::AsnNotUnique => "The ASN is not unique (only impact on firewalls)",
            IssueType::BmcNoDistinctIp => "BMC IP address is not distinct",
            IssueType::Stuck => "the machine stays in a state it should pass through",
            IssueType::UnexpectedTransitions => {
                "the machine received events its state has no rule for"
            }
        }
    }

    /// Whether the type is metal-api's (else fsmlog's own).
    pub fn metal_api(self) -> bool {
        !matches!(self, IssueType::Stuck | IssueType::UnexpectedTransitions)
    }

    /// What an export must hold for the type to be judged of a machine.
    pub fn needs(self) -> Needs {
        match self {
            IssueType::NoEventContainer => Needs::MachineExport,
            IssueType::NoPartition => Needs::MachineObject,
            IssueType::AsnNotUnique => Needs::Allocation,
            IssueType::BmcWithoutMac
            | IssueType::BmcWithoutIp
            | IssueType::BmcInfoOutdated
            | IssueType::BmcNoDistinctIp => Needs::Ipmi,
            IssueType::LivelinessDead
            | IssueType::LivelinessUnknown
            | IssueType::LivelinessNotAvailable
            | IssueType::FailedMachineReclaim
            | IssueType::Crashloop
            | IssueType::LastEventError
            | IssueType::Stuck
            | IssueType::UnexpectedTransitions => Needs::Events,
        }
    }

    /// Where the type is explained: metal-api's troubleshooting page for its own types, and
    /// for fsmlog's two the README's audit section in fsmlog's repository (`repository` in
    /// Cargo.toml; empty while it has none, as the exporter writes a type without a link).
    pub fn refurl(self) -> String {
        if !self.metal_api() {
            let repository = env!("CARGO_PKG_REPOSITORY");
            return if repository.is_empty() {
                String::new()
            } else {
                format!("{repository}#audit-a-fleet")
            };
        }
        format!(
            "https://docs.metal-stack.io/stable/installation/troubleshoot/#{}",
            self.id()
        )
    }
}

impl fmt::Display for IssueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}
