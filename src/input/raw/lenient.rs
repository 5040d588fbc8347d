//! Reading keys as Go's `encoding/json` reads them: a repeated key keeps its last value,
//! unknown keys are skipped, a number where text is expected is taken as its text, and a field
//! that is absent is told from one that is `null`.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// Text as an export holds it: a string, or a number or boolean taken as its text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Text<'a>(pub Cow<'a, str>);

impl<'a> std::ops::Deref for Text<'a> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor<'a>(PhantomData<&'a ()>);

        impl<'de: 'a, 'a> Visitor<'de> for TextVisitor<'a> {
            type Value = Text<'a>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(v)))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v)))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }

            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }
        }

        deserializer.deserialize_any(TextVisitor(PhantomData))
    }
}

/// Text that remembers the unsigned integer it was written as: the v2 API's protojson writes
/// an enum as its number where asked to (`UseEnumNumbers`, grpcurl), and only a number (not
/// the string `"3"`) is read as one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct EnumText<'a> {
    pub text: Text<'a>,
    pub number: Option<u64>,
}

impl<'a> std::ops::Deref for EnumText<'a> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.text
    }
}

impl<'a> From<Text<'a>> for EnumText<'a> {
    fn from(text: Text<'a>) -> Self {
        EnumText { text, number: None }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for EnumText<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EnumVisitor<'a>(PhantomData<&'a ()>);

        impl<'de: 'a, 'a> Visitor<'de> for EnumVisitor<'a> {
            type Value = EnumText<'a>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or an enum number")
            }

            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(v)).into())
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_string())).into())
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v)).into())
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(EnumText {
                    text: Text(Cow::Owned(v.to_string())),
                    number: Some(v),
                })
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(EnumText {
                    text: Text(Cow::Owned(v.to_string())),
                    number: u64::try_from(v).ok(),
                })
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_string())).into())
            }

            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_string())).into())
            }
        }

        deserializer.deserialize_any(EnumVisitor(PhantomData))
    }
}

/// Implements `Deserialize` for a struct of `Option` fields read from a map: the last of
/// repeated keys wins, unknown keys are skipped. Keys are matched as serde's derive matches
/// them, to a field tag, without copying or re-checking them.
macro_rules! last_wins {
    ($name:ident { $($field:ident: [$($key:literal),+]),* $(,)? }) => {
        impl $name<'_> {
            /// Every key the type reads; any other is ignored.
            #[allow(dead_code)]
            pub(crate) const KEYS: &'static [&'static str] = &[$($($key),+),*];
        }

        impl<'de: 'a, 'a> Deserialize<'de> for $name<'a> {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                #[allow(non_camel_case_types)]
                enum Field {
                    $($field,)*
                    Other,
                }

                impl<'de> Deserialize<'de> for Field {
                    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                        struct FieldVisitor;

                        impl Visitor<'_> for FieldVisitor {
                            type Value = Field;

                            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                                f.write_str("a key")
                            }

                            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
                                Ok(match v {
                                    $($($key)|+ => Field::$field,)*
                                    _ => Field::Other,
                                })
                            }
                        }

                        deserializer.deserialize_identifier(FieldVisitor)
                    }
                }

                struct MapVisitor<'a>(PhantomData<&'a ()>);

                impl<'de: 'a, 'a> Visitor<'de> for MapVisitor<'a> {
                    type Value = $name<'a>;

                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str("an object")
                    }

                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                        let mut out = $name::default();
                        while let Some(key) = map.next_key::<Field>()? {
                            match key {
                                $(Field::$field => out.$field = map.next_value()?,)*
                                Field::Other => {
                                    map.next_value::<IgnoredAny>()?;
                                }
                            }
                        }
                        Ok(out)
                    }
                }

                deserializer.deserialize_map(MapVisitor(PhantomData))
            }
        }
    };
}

/// A field that may be absent, `null`, or a value; `Option` alone cannot tell the first two
/// apart.
#[derive(Default)]
pub(crate) enum Slot<T> {
    #[default]
    Absent,
    Null,
    Value(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Slot<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Option::<T>::deserialize(deserializer)? {
            Some(value) => Slot::Value(value),
            None => Slot::Null,
        })
    }
}

/// A value only shown, never judged by: read when it has the shape expected, or a scalar
/// that can stand for it (a partition given by its id alone), and otherwise taken as absent
/// rather than failing the machine it belongs to.
pub(crate) struct Loose<T>(pub Option<T>);

impl<T> Default for Loose<T> {
    fn default() -> Self {
        Loose(None)
    }
}

/// What a scalar stands for where an object was expected.
pub(crate) trait FromScalar<'a>: Sized {
    fn from_scalar(text: Text<'a>) -> Option<Self>;

    /// Whether an object is read as the value (else it is absent, like an array).
    fn from_object() -> bool {
        true
    }
}

impl<'a> FromScalar<'a> for Text<'a> {
    fn from_scalar(text: Text<'a>) -> Option<Self> {
        Some(text)
    }

    fn from_object() -> bool {
        false
    }
}

impl<'de: 'a, 'a, T: Deserialize<'de> + FromScalar<'a>> Deserialize<'de> for Loose<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct LooseVisitor<'a, T>(PhantomData<(&'a (), T)>);

        impl<'de: 'a, 'a, T: Deserialize<'de> + FromScalar<'a>> Visitor<'de> for LooseVisitor<'a, T> {
            type Value = Loose<T>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                if !T::from_object() {
                    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                    return Ok(Loose(None));
                }
                let value = T::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(Loose(Some(value)))
            }

            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Loose(None))
            }

            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Loose(T::from_scalar(Text(Cow::Borrowed(v)))))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Loose(T::from_scalar(Text(Cow::Owned(v.to_string())))))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Loose(T::from_scalar(Text(Cow::Owned(v.to_string())))))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Loose(T::from_scalar(Text(Cow::Owned(v.to_string())))))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(Loose(T::from_scalar(Text(Cow::Owned(v.to_string())))))
            }

            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(Loose(T::from_scalar(Text(Cow::Owned(v.to_string())))))
            }

            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Loose(None))
            }

            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Loose(None))
            }
        }

        deserializer.deserialize_any(LooseVisitor(PhantomData))
    }
}

pub(crate) use last_wins;
