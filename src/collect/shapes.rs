//! The v1 `MachineIPMIResponse` (metal-api's `service/v1/machine.go`) as far as fsmlog keeps it:
//! serde reads only these members, so an allocation's user data and SSH keys and the BMC's
//! user and password are never held, and so can never be written. The same structs, written,
//! are `machines.json`: a v1 `list-json` every reader reads.

use serde::{Deserialize, Serialize};

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
    pub allocation: Option<Allocation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<MachineState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveliness: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    #[serde(default)]
    pub events: Events,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipmi: Option<Ipmi>,
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
    pub time: String,
    pub event: String,
    #[serde(default)]
    pub message: String,
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
