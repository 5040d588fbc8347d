//! The exported values the differential properties are drawn from: machines and logs as
//! metalctl prints them (or compact), with hard text and damage.

use proptest::prelude::*;

/// Text as exports hold it, and the characters that make a string hard: quotes,
/// backslashes, controls, non-ASCII, bidi.
pub fn text() -> impl Strategy<Value = serde_json::Value> {
    prop_oneof![
        "[a-zA-Z0-9 :.-]{0,12}".prop_map(serde_json::Value::from),
        "[a-z\"\\\\/\u{0}-\u{1f}é漢\u{202e} ]{0,12}".prop_map(serde_json::Value::from),
        prop::sample::select(vec![
            "2025-06-23T05:39:40.435Z",
            "2025-06-23T05:39:40Z",
            "2025-02-30T00:00:00Z",
            "2025-06-23 05:39:40",
            "Preparing",
            "PXE Booting",
            "[unexpectedly received in state waiting]: dhcp",
        ])
        .prop_map(serde_json::Value::from),
        Just(serde_json::Value::Null),
        (-5i64..5).prop_map(serde_json::Value::from),
        Just(serde_json::json!(true)),
    ]
}

/// Any JSON value, with the numbers and nestings a hardware section has.
pub fn anything() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        text(),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<u64>().prop_map(serde_json::Value::from),
        (-1e6f64..1e6).prop_map(serde_json::Value::from),
        Just(serde_json::json!(1e300)),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
            prop::collection::btree_map("[a-z_]{1,6}", inner, 0..4)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

/// An ASN as an allocation's network may hold it: metal-api's (a `uint32`, 0 for none), and
/// what it never writes (negative, too large, a fraction, an exponent, text, anything).
fn asn() -> impl Strategy<Value = serde_json::Value> {
    prop_oneof![
        3 => (0u64..5_000_000_000).prop_map(serde_json::Value::from),
        2 => Just(serde_json::json!(4_200_000_001u64)),
        1 => Just(serde_json::json!(-1)),
        1 => Just(serde_json::json!(65000.0)),
        1 => Just(serde_json::json!(1e5)),
        1 => text(),
        1 => anything(),
    ]
}

/// An allocation as asn-not-unique reads it: its role and its networks' ASNs, among the
/// members a network has besides (now and then a network that is no object).
fn firewall_allocation() -> impl Strategy<Value = serde_json::Value> {
    let network = prop_oneof![
        4 => asn().prop_map(|asn| serde_json::json!({
            "asn": asn, "networkid": "internet", "prefixes": ["185.1.2.0/24"], "vrf": 104009
        })),
        1 => anything(),
    ];
    (
        prop::sample::select(vec!["firewall", "machine", ""]),
        prop_oneof![
            4 => prop::collection::vec(network, 0..3).prop_map(serde_json::Value::from),
            1 => anything(),
        ],
    )
        .prop_map(|(role, networks)| {
            serde_json::json!({"role": role, "hostname": "fw", "networks": networks})
        })
}

/// The `ipmi` object of `metalctl machine ipmi`: what the BMC issues read (address, mac,
/// last_updated) beside the credentials and the rest; now and then no object at all.
fn ipmi() -> impl Strategy<Value = serde_json::Value> {
    let updated = prop_oneof![
        Just(serde_json::json!("0001-01-01T00:00:00Z")),
        Just(serde_json::json!("2025-06-23T05:39:40.435Z")),
        text(),
    ];
    prop_oneof![
        4 => (text(), text(), updated, text()).prop_map(|(address, mac, updated, secret)| {
            serde_json::json!({"address": address, "mac": mac, "last_updated": updated,
                "user": "metal", "password": secret, "fru": {"board_mfg": "x"}})
        }),
        1 => anything(),
    ]
}

/// A machine as a v1 export holds it, now and then with another format's keys or odd values.
pub fn machine_value() -> impl Strategy<Value = serde_json::Value> {
    let event = || {
        (text(), text(), text(), prop::option::of(anything())).prop_map(
            |(time, event, message, extra)| {
                let mut e = serde_json::json!({"time": time, "event": event, "message": message});
                if let Some(extra) = extra {
                    e["extra"] = extra;
                }
                e
            },
        )
    };
    let block = (
        prop::collection::vec(event(), 0..4),
        prop::option::of(event()),
        text(),
        prop::sample::select(vec![
            serde_json::json!(true),
            serde_json::json!(false),
            serde_json::Value::Null,
            serde_json::json!("x"),
        ]),
    )
        .prop_map(|(log, last_error, time, flag)| {
            serde_json::json!({"log": log, "last_error_event": last_error,
                "last_event_time": time, "crash_loop": flag, "failed_machine_reclaim": flag})
        });
    (
        text(),
        prop::option::of(block),
        prop::option::of(anything()),
        prop::option::of(anything()),
        prop::sample::select(vec![
            "",
            "uuid",
            "log",
            "status",
            "hardware",
            "liveliness",
            "partition",
            "size",
            "rackid",
            "state",
            "tags",
        ]),
        // What metal-metrics-exporter reads: the state and the two tags it looks for.
        prop::option::of((
            text(),
            prop::collection::vec(
                prop_oneof![
                    text(),
                    text().prop_map(|t| serde_json::Value::from(format!(
                        "cluster.metal-stack.io/id={}",
                        t.as_str().unwrap_or("7")
                    ))),
                    Just(serde_json::Value::from(
                        "machine.metal-stack.io/network.primary.asn"
                    )),
                ],
                0..3,
            ),
        )),
        prop::option::of(firewall_allocation()),
        prop::option::of(ipmi()),
    )
        .prop_map(
            |(id, events, allocation, other, other_key, labels, firewall, ipmi)| {
                let mut m = serde_json::json!({"id": id});
                if let Some((state, tags)) = labels {
                    m["state"] = serde_json::json!({"value": state, "issuer": ""});
                    m["tags"] = serde_json::json!(tags);
                }
                if let Some(events) = events {
                    m["events"] = events;
                }
                if let Some(allocation) = firewall.or(allocation) {
                    m["allocation"] = allocation;
                }
                if let Some(ipmi) = ipmi {
                    m["ipmi"] = ipmi;
                }
                if let (Some(other), false) = (other, other_key.is_empty()) {
                    m[other_key] = other;
                }
                m
            },
        )
}

/// The machine printed as metalctl prints it (or compact), then maybe damaged: a line said
/// twice (a repeated key), or a byte changed, added or taken away.
pub fn machine_bytes() -> impl Strategy<Value = Vec<u8>> {
    (
        machine_value(),
        0usize..3,
        any::<prop::sample::Index>(),
        prop::sample::select(vec![
            b'"', b'\\', b',', b'}', b'\n', b'0', b'e', 1u8, b' ', b'u',
        ]),
        0usize..4,
    )
        .prop_map(|(value, style, at, byte, damage)| {
            let out = match style {
                0 => serde_json::to_vec(&value).unwrap(),
                n => pretty(&value, if n == 1 { b"    " } else { b"  " }),
            };
            damaged(out, at, byte, damage)
        })
}

/// A value printed with the indent given, as metalctl prints it with four spaces.
pub fn pretty(value: &serde_json::Value, indent: &[u8]) -> Vec<u8> {
    use serde::Serialize;
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(indent);
    let mut printer = serde_json::Serializer::with_formatter(&mut out, formatter);
    value.serialize(&mut printer).unwrap();
    out
}

/// The bytes, maybe damaged: a line said twice (a repeated key), or a byte changed, added
/// or taken away.
pub fn damaged(mut out: Vec<u8>, at: prop::sample::Index, byte: u8, damage: usize) -> Vec<u8> {
    if out.is_empty() {
        return out;
    }
    let i = at.index(out.len());
    match damage {
        1 => out[i] = byte,
        2 => out.insert(i, byte),
        3 => {
            out.remove(i);
        }
        _ => {
            // A line said twice: the same key twice in one object.
            let start = out[..i]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            let end = out[i..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(out.len(), |p| i + p);
            let line = out[start..end].to_vec();
            if line.ends_with(b",") {
                let mut twice = line.clone();
                twice.push(b'\n');
                out.splice(start..start, twice);
            }
        }
    }
    out
}

/// An event of a `machine logs` array: mostly as metal-api writes one, now and then with a
/// key left out or one more, or an odd value.
pub fn log_event() -> impl Strategy<Value = serde_json::Value> {
    let field = || {
        prop_oneof![
            4 => prop::sample::select(vec![
                "2025-06-23T05:39:40.435Z",
                "2025-06-23T05:41:02.1Z",
                "2025-06-22T23:59:59Z",
                "Preparing",
                "PXE Booting",
                "Phoned Home",
                "Waiting",
                "[unexpectedly received in state waiting]: dhcp",
            ])
            .prop_map(serde_json::Value::from),
            3 => "[a-zA-Z0-9 :.\\[\\]-]{0,16}".prop_map(serde_json::Value::from),
            2 => text(),
        ]
    };
    (field(), field(), field(), 0u8..12, anything()).prop_map(
        |(time, event, message, odd, extra)| {
            let mut e = serde_json::json!({"event": event, "message": message, "time": time});
            match odd {
                0 => e["extra"] = extra,
                1 => drop(e.as_object_mut().map(|o| o.remove("time"))),
                2 => drop(e.as_object_mut().map(|o| o.remove("message"))),
                _ => {}
            }
            e
        },
    )
}

/// A machine's log as `metalctl machine logs ID -o json` prints it: the events array, then
/// now and then the `Recent last error` block, then maybe damaged.
pub fn logs_bytes() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(log_event(), 0..6),
        prop::option::of(log_event()),
        any::<prop::sample::Index>(),
        prop::sample::select(vec![
            b'"', b'\\', b',', b'}', b'{', b'\n', b'\r', b'0', 1u8, b' ', b'R', b'[',
        ]),
        0usize..6,
    )
        .prop_map(|(log, last_error, at, byte, damage)| {
            let mut out = pretty(&serde_json::Value::from(log), b"    ");
            out.push(b'\n');
            if let Some(last_error) = last_error {
                out.extend_from_slice(b"\nRecent last error (1h0m0s ago):\n\n");
                out.extend(pretty(&last_error, b"    "));
                out.push(b'\n');
            }
            if damage >= 4 {
                return out;
            }
            damaged(out, at, byte, damage)
        })
}
