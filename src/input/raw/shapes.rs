//! The shapes of exported machines and events as serde reads them: every key the readers use,
//! and which fields make which format.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::lenient::{EnumText, FromScalar, Loose, Slot, Text, last_wins};
pub(crate) use super::members::{Member, RawIpmi, RawNetworks, RawTags};
use crate::input::record::ReadMode;
use crate::input::time::parse_rfc3339;
use crate::log::{Bmc, BmcUpdated, Format, Place};

/// Go's zero `time.Time`, which metal-api writes for a BMC never reported.
fn go_zero_time() -> chrono::DateTime<chrono::Utc> {
    chrono::NaiveDate::from_ymd_opt(1, 1, 1)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc())
        .unwrap_or_default()
}

/// One event as metal-api exports it.
#[derive(Debug, Default)]
pub(crate) struct RawEvent<'a> {
    pub time: Option<Text<'a>>,
    pub event: Option<EnumText<'a>>,
    pub message: Option<Text<'a>>,
}

last_wins!(RawEvent {
    time: ["time"],
    event: ["event"],
    message: ["message"],
});

/// One line of the raw event stream; the machine may be named by any of three keys. A line
/// with `"gap": true` is a collector's marker that the machine's events before its time were
/// lost, not an event.
#[derive(Default)]
pub(crate) struct RawLine<'a> {
    machine: Option<Text<'a>>,
    machine_id: Option<Text<'a>>,
    id: Option<Text<'a>>,
    time: Option<Text<'a>>,
    event: Option<Text<'a>>,
    message: Option<Text<'a>>,
    gap: Option<bool>,
}

last_wins!(RawLine {
    machine: ["machine"],
    machine_id: ["machine_id"],
    id: ["id"],
    time: ["time"],
    event: ["event"],
    message: ["message"],
    gap: ["gap"],
});

impl<'a> RawLine<'a> {
    /// The machine the line names, and its event.
    pub fn machine(self) -> (Option<Text<'a>>, RawEvent<'a>) {
        (
            self.machine.or(self.machine_id).or(self.id),
            RawEvent {
                time: self.time,
                event: self.event.map(EnumText::from),
                message: self.message,
            },
        )
    }

    /// Whether the line is a gap marker (`"gap": true`).
    pub fn is_gap(&self) -> bool {
        self.gap == Some(true)
    }

    /// Whether the line is an event of some machine, or a gap marker.
    pub fn is_event(&self) -> bool {
        (self.machine.is_some() || self.machine_id.is_some() || self.id.is_some())
            && (self.event.is_some() || self.time.is_some())
    }
}

/// metal-api's event container as the v1 machine API exports it (`events` of describe/list).
#[derive(Default)]
pub(crate) struct RawEventBlock<'a> {
    pub(crate) log: Option<Vec<RawEvent<'a>>>,
    pub(crate) last_error_event: Option<RawEvent<'a>>,
    pub(crate) last_event_time: Option<Text<'a>>,
    pub(crate) crash_loop: Option<bool>,
    pub(crate) failed_machine_reclaim: Option<bool>,
}

last_wins!(RawEventBlock {
    log: ["log"],
    last_error_event: ["last_error_event"],
    last_event_time: ["last_event_time"],
    crash_loop: ["crash_loop"],
    failed_machine_reclaim: ["failed_machine_reclaim"],
});

/// `events` is an object in v1 machine exports and an array in the event-table dump.
pub(crate) enum EventsField<'a> {
    Block(RawEventBlock<'a>),
    List(Vec<RawEvent<'a>>),
}

impl<'de: 'a, 'a> Deserialize<'de> for EventsField<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EventsVisitor<'a>(PhantomData<&'a ()>);

        impl<'de: 'a, 'a> Visitor<'de> for EventsVisitor<'a> {
            type Value = EventsField<'a>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an events object or an array of events")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                RawEventBlock::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(EventsField::Block)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Vec::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(EventsField::List)
            }
        }

        deserializer.deserialize_any(EventsVisitor(PhantomData))
    }
}

/// The v2 API's `recentProvisioningEvents` (camelCase or snake_case).
#[derive(Default)]
pub(crate) struct RawV2Events<'a> {
    pub(crate) events: Option<Vec<RawEvent<'a>>>,
    pub(crate) last_error_event: Option<RawEvent<'a>>,
    pub(crate) last_event_time: Option<Text<'a>>,
    pub(crate) state: Option<EnumText<'a>>,
}

last_wins!(RawV2Events {
    events: ["events"],
    last_error_event: ["last_error_event", "lastErrorEvent"],
    last_event_time: ["last_event_time", "lastEventTime"],
    state: ["state"],
});

/// The v2 API's machine `status`; only the liveliness is read.
#[derive(Default)]
pub(crate) struct RawV2Status<'a> {
    pub(crate) liveliness: Option<Text<'a>>,
}

last_wins!(RawV2Status {
    liveliness: ["liveliness"],
});

/// An object named by its `id`: a machine's `partition` and `size`, an allocation's `image`.
#[derive(Default)]
pub(crate) struct RawRef<'a> {
    pub(crate) id: Loose<Text<'a>>,
}

last_wins!(RawRef { id: ["id"] });

impl RawRef<'_> {
    /// What a skim keeps of a member of a partition, size or image: its id.
    pub fn member(key: &[u8]) -> Member {
        match key {
            b"id" => Member::Keep,
            _ => Member::Skip,
        }
    }
}

impl<'a> FromScalar<'a> for RawRef<'a> {
    /// A partition, size or image given by its id alone.
    fn from_scalar(text: Text<'a>) -> Option<Self> {
        Some(RawRef {
            id: Loose(Some(text)),
        })
    }
}

impl<'a> FromScalar<'a> for RawAllocation<'a> {
    /// An allocation that is no object says the machine is allocated, and nothing more.
    fn from_scalar(_: Text<'a>) -> Option<Self> {
        Some(RawAllocation::default())
    }
}

/// A machine's `state`: whether it is locked or reserved (`value`, empty for neither).
#[derive(Default)]
pub(crate) struct RawState<'a> {
    pub(crate) value: Loose<Text<'a>>,
}

last_wins!(RawState { value: ["value"] });

impl<'a> FromScalar<'a> for RawState<'a> {
    /// A state that is no object says nothing.
    fn from_scalar(_: Text<'a>) -> Option<Self> {
        None
    }
}

/// A machine's allocation: what of it says who has the machine.
#[derive(Default)]
pub(crate) struct RawAllocation<'a> {
    pub(crate) hostname: Loose<Text<'a>>,
    pub(crate) project: Loose<Text<'a>>,
    pub(crate) role: Loose<Text<'a>>,
    pub(crate) image: Loose<RawRef<'a>>,
    pub(crate) networks: RawNetworks<'a>,
}

last_wins!(RawAllocation {
    hostname: ["hostname"],
    project: ["project"],
    role: ["role"],
    image: ["image"],
    networks: ["networks"],
});

impl RawAllocation<'_> {
    /// What a skim keeps of an allocation's member: the keys read here but the networks,
    /// which only the audit reads ([`RawAllocation::audit_member`]).
    pub fn member(key: &[u8]) -> Member {
        match key {
            b"networks" => Member::Skip,
            key => RawAllocation::audit_member(key),
        }
    }

    /// What a skim keeps of an allocation's member for the audit: the keys read here.
    pub fn audit_member(key: &[u8]) -> Member {
        match key {
            b"image" => Member::Within(RawRef::member),
            key if RawAllocation::KEYS.iter().any(|k| k.as_bytes() == key) => Member::Keep,
            _ => Member::Skip,
        }
    }
}

/// Any top-level value or array element of the formats read here; which fields are set
/// tells which format it is.
#[derive(Default)]
pub(crate) struct RawItem<'a> {
    pub(crate) id: Option<Text<'a>>,
    pub(crate) uuid: Option<Text<'a>>,
    pub(crate) events: Slot<EventsField<'a>>,
    pub(crate) recent_provisioning_events: Slot<RawV2Events<'a>>,
    pub(crate) time: Option<Text<'a>>,
    pub(crate) event: Option<Text<'a>>,
    pub(crate) message: Option<Text<'a>>,
    pub(crate) log: Option<Vec<RawEvent<'a>>>,
    pub(crate) last_error_event: Option<RawEvent<'a>>,
    pub(crate) last_event_time: Option<Text<'a>>,
    pub(crate) crash_loop: Option<bool>,
    pub(crate) failed_machine_reclaim: Option<bool>,
    pub(crate) liveliness: Option<Text<'a>>,
    pub(crate) allocation: Slot<Loose<RawAllocation<'a>>>,
    pub(crate) status: Option<RawV2Status<'a>>,
    /// Where the machine is: only shown, so read loosely (a wrong shape is no place, not a
    /// broken machine).
    pub(crate) partition: Slot<Loose<RawRef<'a>>>,
    /// v1's `rackid`, v2's `rack`.
    pub(crate) rack: Loose<Text<'a>>,
    pub(crate) size: Loose<RawRef<'a>>,
    /// Whether the machine is locked or reserved, and its tags: what metal-metrics-exporter
    /// labels a machine with.
    pub(crate) state: Loose<RawState<'a>>,
    pub(crate) tags: RawTags<'a>,
    /// The BMC, in a `metalctl machine ipmi` export.
    pub(crate) ipmi: Loose<RawIpmi<'a>>,
}

last_wins!(RawItem {
    id: ["id"],
    uuid: ["uuid"],
    events: ["events"],
    recent_provisioning_events: ["recentProvisioningEvents", "recent_provisioning_events"],
    time: ["time"],
    event: ["event"],
    message: ["message"],
    log: ["log"],
    last_error_event: ["last_error_event"],
    last_event_time: ["last_event_time"],
    crash_loop: ["crash_loop"],
    failed_machine_reclaim: ["failed_machine_reclaim"],
    liveliness: ["liveliness"],
    allocation: ["allocation"],
    status: ["status"],
    partition: ["partition"],
    rack: ["rackid", "rack"],
    size: ["size"],
    state: ["state"],
    tags: ["tags"],
    ipmi: ["ipmi"],
});

impl<'a> RawItem<'a> {
    /// What a skim of an exported object keeps of a member (see [`crate::input::fast::skim`])
    /// for `mode`: what [`RawItem::member`] keeps, or [`RawItem::audit_member`] for the audit.
    pub fn chooser(mode: ReadMode) -> fn(&[u8]) -> Member {
        match mode {
            ReadMode::Audit => RawItem::audit_member,
            ReadMode::Whole | ReadMode::IdsOnly | ReadMode::Lines => RawItem::member,
        }
    }

    /// What a skim keeps of a member: what the audit keeps ([`RawItem::audit_member`]) but
    /// the BMC and the allocation's networks, which only the audit reads.
    pub fn member(key: &[u8]) -> Member {
        match key {
            b"allocation" => Member::Within(RawAllocation::member),
            b"ipmi" => Member::Skip,
            key => RawItem::audit_member(key),
        }
    }

    /// What a skim keeps of a member for the audit: the keys read here; of the allocation
    /// (which can hold user data), the partition, the size and the BMC (whose credentials are
    /// never parsed) only what is read.
    pub fn audit_member(key: &[u8]) -> Member {
        match key {
            b"allocation" => Member::Within(RawAllocation::audit_member),
            b"partition" | b"size" => Member::Within(RawRef::member),
            b"ipmi" => Member::Within(RawIpmi::member),
            key if RawItem::KEYS.iter().any(|k| k.as_bytes() == key) => Member::Keep,
            _ => Member::Skip,
        }
    }

    /// Whether the object says its partition: `null`, or a partition read (metal-api's v1
    /// machine always has the member; one of no readable shape says nothing).
    pub fn says_partition(&self) -> bool {
        matches!(self.partition, Slot::Null | Slot::Value(Loose(Some(_))))
    }

    /// The BMC as the object's `ipmi` says, where it is an object.
    pub fn bmc(&self) -> Option<Bmc> {
        let ipmi = self.ipmi.0.as_ref()?;
        let text = |t: &Loose<Text>| t.0.as_ref().map_or(String::new(), |t| t.0.to_string());
        let last_updated = match ipmi.last_updated.0.as_deref() {
            None | Some("") => BmcUpdated::Never,
            Some(text) => match parse_rfc3339(text) {
                // Go's zero time, which `IsZero` tells.
                Ok(t) if t == go_zero_time() => BmcUpdated::Never,
                Ok(t) => BmcUpdated::At(t),
                Err(_) => BmcUpdated::Unreadable,
            },
        };
        Some(Bmc {
            address: text(&ipmi.address),
            mac: text(&ipmi.mac),
            last_updated,
        })
    }

    /// Where the machine is and who has it, as far as the object says.
    pub fn place(&self) -> Option<Place> {
        let text = |t: &Loose<Text>| t.0.as_ref().map(|t| t.0.to_string());
        let id = |r: &Loose<RawRef>| r.0.as_ref().and_then(|r| text(&r.id));
        let mut place = Place {
            partition: match &self.partition {
                Slot::Value(partition) => id(partition),
                _ => None,
            },
            rack: text(&self.rack),
            size: id(&self.size),
            state: self.state.0.as_ref().and_then(|s| text(&s.value)),
            ..Place::default()
        };
        if let Slot::Value(Loose(Some(a))) = &self.allocation {
            place.hostname = text(&a.hostname);
            place.project = text(&a.project);
            place.role = text(&a.role);
            place.image = id(&a.image);
            place.cluster = self.tags.cluster.as_deref().map(str::to_string);
            place.primary_asn = self.tags.primary_asn.as_deref().map(str::to_string);
            place.asns = a
                .networks
                .asns
                .iter()
                .filter_map(|asn| asn.parse::<u32>().ok())
                .filter(|&asn| asn != 0)
                .collect();
        }
        (!place.is_empty()).then_some(place)
    }

    /// The format this value belongs to, judged by its fields.
    #[inline]
    pub fn kind(&self) -> Option<Format> {
        match (&self.events, &self.recent_provisioning_events, &self.log) {
            (Slot::Value(EventsField::Block(_)) | Slot::Null, _, _) => Some(Format::DescribeJson),
            (Slot::Value(EventsField::List(_)), _, _) => Some(Format::ContainerDump),
            (Slot::Absent, Slot::Value(_) | Slot::Null, _) => Some(Format::V2Json),
            (Slot::Absent, Slot::Absent, Some(_)) => Some(Format::EventApi),
            _ if self.event.is_some() || self.time.is_some() => Some(Format::LogsJson),
            _ => None,
        }
    }

    /// What an element of an array (or a document of a YAML stream) is, by its fields: an event
    /// (`LogsJson`), a machine of some format (a bare machine object counts as one without
    /// events), or `None` for neither.
    #[inline]
    pub fn element_kind(&self) -> Option<Format> {
        self.kind()
            .or_else(|| self.names_a_machine().then_some(Format::DescribeJson))
    }

    /// Whether the value names a machine (an `id` or `uuid`) though it carries no events: a
    /// machine without an event container, in an array of machines.
    pub fn names_a_machine(&self) -> bool {
        self.kind().is_none() && (self.id.is_some() || self.uuid.is_some())
    }

    /// The value as one event of an event array.
    #[inline]
    pub fn into_event(self) -> RawEvent<'a> {
        RawEvent {
            time: self.time,
            event: self.event.map(EnumText::from),
            message: self.message,
        }
    }
}

/// The v2 enum spelling of a liveliness as metal-api's v1 spells it.
pub(crate) fn v2_liveliness(text: &str) -> Option<&'static str> {
    let tail = text
        .strip_prefix("MACHINE_LIVELINESS_")
        .unwrap_or(text)
        .to_ascii_lowercase();
    match tail.as_str() {
        "alive" => Some("Alive"),
        "dead" => Some("Dead"),
        "unknown" => Some("Unknown"),
        _ => None,
    }
}
