//! The members of a machine object that are only shown or judged by the audit, read loosely
//! (a wrong shape is no value, never a broken machine): its tags, its allocation's networks,
//! its BMC; and what a skim keeps of a member.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::lenient::{FromScalar, Loose, Text, last_wins};

/// What to do with one member, by its key.
#[derive(Debug, Clone, Copy)]
pub enum Member {
    /// Leave it out.
    Skip,
    /// Keep it as it is.
    Keep,
    /// Keep of an object value only the members this chooses (all of it where the object
    /// cannot be skimmed).
    Within(fn(&[u8]) -> Member),
}

/// The tags of a machine that metal-metrics-exporter reads (metal-lib's `tag.NewTagMap`:
/// each tag cut at its first `=`, the last of a repeated key winning; a tag without `=` is
/// its key with an empty value).
#[derive(Default)]
pub(crate) struct RawTags<'a> {
    pub(crate) cluster: Option<Cow<'a, str>>,
    pub(crate) primary_asn: Option<Cow<'a, str>>,
}

/// metal-lib's `tag.ClusterID`.
pub(crate) const CLUSTER_TAG: &str = "cluster.metal-stack.io/id";
/// metal-lib's `tag.MachineNetworkPrimaryASN`.
pub(crate) const PRIMARY_ASN_TAG: &str = "machine.metal-stack.io/network.primary.asn";

impl<'a> RawTags<'a> {
    /// Takes one tag into account.
    pub(crate) fn add(&mut self, tag: Cow<'a, str>) {
        let key_len = tag.find('=').unwrap_or(tag.len());
        let slot = match &tag[..key_len] {
            CLUSTER_TAG => &mut self.cluster,
            PRIMARY_ASN_TAG => &mut self.primary_asn,
            _ => return,
        };
        let value_at = (key_len + 1).min(tag.len());
        *slot = Some(match tag {
            Cow::Borrowed(t) => Cow::Borrowed(&t[value_at..]),
            Cow::Owned(t) => Cow::Owned(t[value_at..].to_string()),
        });
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for RawTags<'a> {
    /// Only shown, so read loosely: an element that is no string is passed over, and tags
    /// that are no array are none.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TagsVisitor<'a>(PhantomData<&'a ()>);

        impl<'de: 'a, 'a> Visitor<'de> for TagsVisitor<'a> {
            type Value = RawTags<'a>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut tags = RawTags::default();
                while let Some(Loose(tag)) = seq.next_element::<Loose<Text<'a>>>()? {
                    if let Some(tag) = tag {
                        tags.add(tag.0);
                    }
                }
                Ok(tags)
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(RawTags::default())
            }

            fn visit_borrowed_str<E: de::Error>(self, _: &'de str) -> Result<Self::Value, E> {
                Ok(RawTags::default())
            }

            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(RawTags::default())
            }

            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(RawTags::default())
            }

            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(RawTags::default())
            }

            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(RawTags::default())
            }

            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(RawTags::default())
            }

            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(RawTags::default())
            }

            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(RawTags::default())
            }
        }

        deserializer.deserialize_any(TagsVisitor(PhantomData))
    }
}

/// One of an allocation's networks: only its ASN is read.
#[derive(Default)]
pub(crate) struct RawNetwork<'a> {
    pub(crate) asn: Loose<Text<'a>>,
}

last_wins!(RawNetwork { asn: ["asn"] });

impl<'a> FromScalar<'a> for RawNetwork<'a> {
    /// A network that is no object says nothing.
    fn from_scalar(_: Text<'a>) -> Option<Self> {
        None
    }
}

/// An allocation's `networks`, of which the ASNs are read: loosely, as only asn-not-unique
/// judges by them (an element that is no object is passed over, networks that are no array
/// are none).
#[derive(Default)]
pub(crate) struct RawNetworks<'a> {
    pub(crate) asns: Vec<Text<'a>>,
}

impl<'de: 'a, 'a> Deserialize<'de> for RawNetworks<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NetworksVisitor<'a>(PhantomData<&'a ()>);

        impl<'de: 'a, 'a> Visitor<'de> for NetworksVisitor<'a> {
            type Value = RawNetworks<'a>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut networks = RawNetworks::default();
                while let Some(Loose(network)) = seq.next_element::<Loose<RawNetwork<'a>>>()? {
                    if let Some(Loose(Some(asn))) = network.map(|n| n.asn) {
                        networks.asns.push(asn);
                    }
                }
                Ok(networks)
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(RawNetworks::default())
            }

            fn visit_borrowed_str<E: de::Error>(self, _: &'de str) -> Result<Self::Value, E> {
                Ok(RawNetworks::default())
            }

            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(RawNetworks::default())
            }

            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(RawNetworks::default())
            }

            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(RawNetworks::default())
            }

            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(RawNetworks::default())
            }

            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(RawNetworks::default())
            }

            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(RawNetworks::default())
            }

            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(RawNetworks::default())
            }
        }

        deserializer.deserialize_any(NetworksVisitor(PhantomData))
    }
}

/// The `ipmi` object of `metalctl machine ipmi`'s machines (metal-api's `MachineIPMI`): what
/// the BMC issues judge by. Its `user` and `password` are never read.
#[derive(Default)]
pub(crate) struct RawIpmi<'a> {
    pub(crate) address: Loose<Text<'a>>,
    pub(crate) mac: Loose<Text<'a>>,
    pub(crate) last_updated: Loose<Text<'a>>,
}

last_wins!(RawIpmi {
    address: ["address"],
    mac: ["mac"],
    last_updated: ["last_updated"],
});

impl<'a> FromScalar<'a> for RawIpmi<'a> {
    /// An `ipmi` that is no object says nothing of the BMC: its issues are not judged.
    fn from_scalar(_: Text<'a>) -> Option<Self> {
        None
    }
}

impl RawIpmi<'_> {
    /// What a skim keeps of the `ipmi` object: the members read here (the credentials and
    /// the rest of it never reach a parser).
    pub fn member(key: &[u8]) -> Member {
        match key {
            key if RawIpmi::KEYS.iter().any(|k| k.as_bytes() == key) => Member::Keep,
            _ => Member::Skip,
        }
    }
}
