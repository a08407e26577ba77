//! JSON values a user stores, written to snapshots and the op log so that
//! every number comes back exactly as it was sent.
//!
//! serde_json is built with `arbitrary_precision`: a parsed number keeps its
//! text (`1234.567890123456789`, `1e5`, 28-digit decimals). Its own
//! serializer writes that text back, but in a binary format it becomes a
//! private one-field struct, which positional MessagePack writes as a
//! one-element array that reads back as an array. So stored fields go
//! through [`Exact`] in binary formats:
//! - a number a MessagePack integer or double holds exactly (its text is
//!   what serde_json writes for that integer or double) is written as one,
//!   so snapshots of ordinary data are unchanged and older ones still load;
//! - any other number is written as the one-entry map
//!   `{"$serde_json::private::Number": text}`, which serde_json's `Value`
//!   reads back as that number, from any format.
//!
//! Human-readable formats (JSON answers) take the value as it is.
//!
//! Use with `#[serde(serialize_with = "exact_json::value")]` (and the
//! `option_value`, `map`, `option_map`, `vec_map` forms).

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::{Map, Number, Value};

/// serde_json's key for a number carried as its text.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// A stored JSON value, written so its numbers survive binary formats.
pub struct Exact<'a>(pub &'a Value);

struct ExactMap<'a>(&'a Map<String, Value>);

/// How a number is written to a binary format.
enum Stored<'a> {
    U64(u64),
    I64(i64),
    F64(f64),
    Text(&'a str),
}

fn stored(n: &Number) -> Stored<'_> {
    let text = n.as_str();
    // `-0` parses as the integer 0; its sign is kept by writing its text.
    if text == "-0" {
        return Stored::Text(text);
    }
    if let Some(u) = n.as_u64() {
        return Stored::U64(u);
    }
    if let Some(i) = n.as_i64() {
        return Stored::I64(i);
    }
    match text.parse::<f64>() {
        // The double is the number only if serde_json writes it back as the same text.
        Ok(f) if f.is_finite() && Number::from_f64(f).is_some_and(|back| back.as_str() == text) => Stored::F64(f),
        _ => Stored::Text(text),
    }
}

impl Serialize for Exact<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            return self.0.serialize(s);
        }
        match self.0 {
            Value::Number(n) => match stored(n) {
                Stored::U64(u) => s.serialize_u64(u),
                Stored::I64(i) => s.serialize_i64(i),
                Stored::F64(f) => s.serialize_f64(f),
                Stored::Text(text) => {
                    let mut m = s.serialize_map(Some(1))?;
                    m.serialize_entry(NUMBER_TOKEN, text)?;
                    m.end()
                }
            },
            Value::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for v in items {
                    seq.serialize_element(&Exact(v))?;
                }
                seq.end()
            }
            Value::Object(map) => ExactMap(map).serialize(s),
            other => other.serialize(s),
        }
    }
}

// An object whose *first* key is serde_json's private NUMBER_TOKEN reads
// back as a number, so a user's object that holds it (legal JSON: parsing
// treats it specially only when it comes first in the text) must never be
// written with it first, as sorted keys would.
impl Serialize for ExactMap<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let human = s.is_human_readable();
        let mut m = s.serialize_map(Some(self.0.len()))?;
        let entries = self.0.iter().filter(|(k, _)| *k != NUMBER_TOKEN).chain(self.0.iter().filter(|(k, _)| *k == NUMBER_TOKEN));
        for (k, v) in entries {
            if human {
                m.serialize_entry(k, v)?;
            } else {
                m.serialize_entry(k, &Exact(v))?;
            }
        }
        m.end()
    }
}

/// `serialize_with` for a `Value`.
pub fn value<S: Serializer>(v: &Value, s: S) -> Result<S::Ok, S::Error> {
    Exact(v).serialize(s)
}

/// `serialize_with` for an `Option<Value>`.
pub fn option_value<S: Serializer>(v: &Option<Value>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.serialize_some(&Exact(v)),
        None => s.serialize_none(),
    }
}

/// `serialize_with` for a JSON object.
pub fn map<S: Serializer>(m: &Map<String, Value>, s: S) -> Result<S::Ok, S::Error> {
    ExactMap(m).serialize(s)
}

/// `serialize_with` for an optional JSON object.
pub fn option_map<S: Serializer>(m: &Option<Map<String, Value>>, s: S) -> Result<S::Ok, S::Error> {
    match m {
        Some(m) => s.serialize_some(&ExactMap(m)),
        None => s.serialize_none(),
    }
}

/// `serialize_with` for a list of JSON objects.
pub fn vec_map<S: Serializer>(v: &[Map<String, Value>], s: S) -> Result<S::Ok, S::Error> {
    let mut seq = s.serialize_seq(Some(v.len()))?;
    for m in v {
        seq.serialize_element(&ExactMap(m))?;
    }
    seq.end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Held {
        #[serde(serialize_with = "value")]
        v: Value,
    }

    fn round_trip(text: &str) -> String {
        let held = Held { v: serde_json::from_str(text).unwrap() };
        let bytes = rmp_serde::to_vec(&held).unwrap();
        let back: Held = crate::core::msgpack::from_slice(&bytes).unwrap();
        assert_eq!(back, held);
        serde_json::to_string(&back.v).unwrap()
    }

    #[test]
    fn numbers_come_back_as_their_text_through_msgpack() {
        for text in [
            r#"{"x":1234.567890123456789}"#,
            r#"{"w":-0,"x":0.1,"y":0.30000000000000004,"z":-0.0}"#,
            r#"[1e+5,1e-7,12345678901234567890123456789,-18446744073709551617]"#,
            r#"{"deep":[[{"a":3.141592653589793238462643383279}]]}"#,
            r#"[18446744073709551615,-9223372036854775808,1.5,2]"#,
        ] {
            assert_eq!(round_trip(text), text);
        }
    }

    #[test]
    fn exact_doubles_and_integers_are_stored_natively() {
        let bytes = rmp_serde::to_vec(&Held { v: serde_json::json!([1.5, 7, -3]) }).unwrap();
        assert!(!bytes.windows(NUMBER_TOKEN.len()).any(|w| w == NUMBER_TOKEN.as_bytes()), "no text numbers for exact doubles");
    }
}
