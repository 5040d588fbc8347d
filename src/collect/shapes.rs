//! The v1 `MachineIPMIResponse` (metal-api's `service/v1/machine.go`) as far as fsmlog keeps it:
//! serde reads only these members, so an allocation's user data and SSH keys and the BMC's
//! user and password are never held, and so can never be written. The same structs, written,
//! are `machines.json`: a v1 `list-json` every reader reads.

use std::cell::RefCell;
use std::collections::HashSet;
use std::ops::Deref;
use std::sync::Arc;

use foldhash::fast::RandomState;
use serde::de::Visitor;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::input::Member;

/// How many events a v1 response carries at most (`RecentProvisioningEventsLimit`).
pub const WINDOW: usize = 20;

/// One machine of the poll.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Machine {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<Named>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rackid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Named>,
    /// Written as `null` where the machine is not allocated, so that a reader learns it lost
    /// its allocation.
    #[serde(default)]
    pub allocation: Option<Box<Allocation>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<MachineState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveliness: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    #[serde(default)]
    pub events: Events,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipmi: Option<Box<Ipmi>>,
}

/// What a skim of a polled machine keeps of a member: the members these structs read, and
/// nothing else (so neither secrets nor hardware reach serde).
pub fn kept(key: &[u8]) -> Member {
    match key {
        b"id" | b"partition" | b"rackid" | b"size" | b"state" | b"liveliness" | b"tags"
        | b"events" => Member::Keep,
        b"allocation" => Member::Within(|key| match key {
            b"hostname" | b"project" | b"role" | b"image" => Member::Keep,
            _ => Member::Skip,
        }),
        b"ipmi" => Member::Within(|key| match key {
            b"address" | b"mac" | b"interface" | b"bmcversion" | b"powerstate"
            | b"last_updated" | b"fru" => Member::Keep,
            _ => Member::Skip,
        }),
        _ => Member::Skip,
    }
}

/// A partition, size or image: its id.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Named {
    #[serde(default)]
    pub id: String,
}

/// Who has the machine; never its networks, user data or SSH keys.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Allocation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<Named>,
}

/// `LOCKED`, `RESERVED` or empty, and why.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct MachineState {
    #[serde(default)]
    pub value: String,
    #[serde(default)]
    pub description: String,
}

/// `MachineRecentProvisioningEvents`; times as metal-api wrote them.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Events {
    /// Newest first, at most [`WINDOW`].
    #[serde(default)]
    pub log: Vec<Event>,
    #[serde(default)]
    pub last_event_time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error_event: Option<Event>,
    #[serde(default)]
    pub crash_loop: bool,
    #[serde(default)]
    pub failed_machine_reclaim: bool,
}

/// `MachineProvisioningEvent`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
pub struct Event {
    pub time: Box<str>,
    pub event: Text,
    #[serde(default)]
    pub message: Text,
}

/// An event's name or message, held once however many events of the poll carry it: a fleet's
/// 20 events a machine repeat a few dozen texts, and 10,000 machines' copies of them were a
/// third of a poll's memory (measured: docs/performance.md).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Text(Arc<str>);

thread_local! {
    /// The texts read on this thread since [`forget_texts`].
    static TEXTS: RefCell<HashSet<Arc<str>, RandomState>> = RefCell::default();
}

/// Lets go of the texts held for sharing (they live on in the events that carry them).
pub fn forget_texts() {
    TEXTS.with(|texts| *texts.borrow_mut() = HashSet::default());
}

impl From<&str> for Text {
    fn from(text: &str) -> Text {
        TEXTS.with(|texts| {
            let mut texts = texts.borrow_mut();
            if let Some(held) = texts.get(text) {
                return Text(Arc::clone(held));
            }
            let held: Arc<str> = text.into();
            texts.insert(Arc::clone(&held));
            Text(held)
        })
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Text, D::Error> {
        deserializer.deserialize_str(TextVisitor)
    }
}

/// Looks a string up as serde hands it over (from the answer's bytes where it has no escape),
/// so a text already held is not copied.
struct TextVisitor;

impl Visitor<'_> for TextVisitor {
    type Value = Text;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Text, E> {
        Ok(Text::from(text))
    }
}

/// The BMC's facts: never its user or password.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Ipmi {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bmcversion: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub powerstate: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fru: Option<Fru>,
}

/// `MachineFru`: what the hardware says it is.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Fru {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chassis_part_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chassis_part_serial: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board_mfg: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board_mfg_serial: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board_part_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_manufacturer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_part_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_serial: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_never_read() {
        let body = r#"[{"id":"m1","allocation":{"hostname":"h","project":"p","user_data":"c2VjcmV0",
            "ssh_pub_keys":["ssh-ed25519 AAAA"],"networks":[{"ips":["10.0.0.1"]}],"image":{"id":"ubuntu","url":"x"}},
            "ipmi":{"address":"10.1.1.1:623","user":"admin","password":"hunter2","fru":{"board_mfg":"Supermicro"}},
            "events":{"log":[{"time":"2025-01-01T00:00:00Z","event":"Alive","message":""}],"crash_loop":true},
            "hardware":{"disks":[]},"bios":{"version":"1"}}]"#;
        let mut machines: Vec<Machine> = serde_json::from_str(body).unwrap();
        machines[0].events.log.clear();
        let written = serde_json::to_string(&machines[0]).unwrap();
        for secret in [
            "c2VjcmV0",
            "ssh-ed25519",
            "hunter2",
            "admin",
            "10.0.0.1",
            "hardware",
        ] {
            assert!(!written.contains(secret), "{secret} in {written}");
        }
        assert!(written.contains(r#""crash_loop":true"#), "{written}");
        assert!(written.contains(r#""board_mfg":"Supermicro""#), "{written}");
        assert!(written.contains(r#""log":[]"#), "{written}");
    }
}
