//! A small MessagePack reader for serde: reads exactly what `rmp_serde`
//! writes (`to_vec_named` and `to_vec`), with far less code per type.
//!
//! `rmp_serde`'s deserializer sends nearly every `deserialize_*` call through
//! one `any_inner`, a match over every MessagePack marker that calls every
//! `visit_*` method, and LLVM copies that match into each visitor: about
//! 1 MB of wasm for edgemem's persisted types. Here the marker is decoded by
//! one non-generic function ([`Reader::head`]) and each typed method calls
//! only the one or two `visit_*` methods its type can take. `deserialize_any`
//! (JSON values, untagged enums) keeps the full dispatch.

use std::fmt;

use serde::de::{self, DeserializeSeed, Visitor};

/// A decode error: its text is what the caller reports.
#[derive(Debug)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    #[cold]
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

type Result<T> = std::result::Result<T, Error>;

/// Nesting limit, so hostile input cannot overflow the stack. What edgemem
/// stores is far shallower: JSON values come through serde_json's parser
/// (at most 128 levels) plus a few levels of envelope. `rmp_serde`'s 1,024
/// overflowed a 2 MiB thread stack in a debug build on maps nested 1,000
/// deep (see `store::tests::fuzz::deep_nesting_is_a_typed_error`).
const DEPTH_MAX: u16 = 256;

/// Decodes `T` from MessagePack bytes. Trailing bytes are ignored, as in
/// `rmp_serde::from_slice`.
pub fn from_slice<'de, T: de::Deserialize<'de>>(bytes: &'de [u8]) -> Result<T> {
    T::deserialize(&mut Reader { b: bytes, pos: 0, depth: 0 })
}

/// A decoded marker with its fixed-size payload.
#[derive(Clone, Copy)]
enum Head {
    Nil,
    Bool(bool),
    UInt(u64),
    Int(i64),
    F32(f32),
    F64(f64),
    Str(u32),
    Bin(u32),
    Array(u32),
    Map(u32),
    Ext(u32),
}

impl Head {
    fn name(self) -> &'static str {
        match self {
            Head::Nil => "nil",
            Head::Bool(_) => "a boolean",
            Head::UInt(_) | Head::Int(_) => "an integer",
            Head::F32(_) | Head::F64(_) => "a float",
            Head::Str(_) => "a string",
            Head::Bin(_) => "binary data",
            Head::Array(_) => "an array",
            Head::Map(_) => "a map",
            Head::Ext(_) => "an extension",
        }
    }
}

#[cold]
#[inline(never)]
fn mismatch(h: Head, expected: &'static str) -> Error {
    Error(format!("type mismatch: found {}, expected {expected}", h.name()))
}

#[cold]
#[inline(never)]
fn eof() -> Error {
    Error("unexpected end of MessagePack data".into())
}

/// The reader: a position in a byte slice.
pub struct Reader<'de> {
    b: &'de [u8],
    pos: usize,
    depth: u16,
}

impl<'de> Reader<'de> {
    fn take(&mut self, n: usize) -> Result<&'de [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.b.len()).ok_or_else(eof)?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn peek(&self) -> Result<u8> {
        self.b.get(self.pos).copied().ok_or_else(eof)
    }

    /// Reads one marker and its fixed-size payload (lengths, numbers).
    #[inline(never)]
    fn head(&mut self) -> Result<Head> {
        let m = self.array::<1>()?[0];
        Ok(match m {
            0x00..=0x7f => Head::UInt(u64::from(m)),
            0x80..=0x8f => Head::Map(u32::from(m & 0x0f)),
            0x90..=0x9f => Head::Array(u32::from(m & 0x0f)),
            0xa0..=0xbf => Head::Str(u32::from(m & 0x1f)),
            0xc0 => Head::Nil,
            0xc2 => Head::Bool(false),
            0xc3 => Head::Bool(true),
            0xc4 => Head::Bin(u32::from(self.array::<1>()?[0])),
            0xc5 => Head::Bin(u32::from(u16::from_be_bytes(self.array()?))),
            0xc6 => Head::Bin(u32::from_be_bytes(self.array()?)),
            0xc7 => Head::Ext(u32::from(self.array::<1>()?[0])),
            0xc8 => Head::Ext(u32::from(u16::from_be_bytes(self.array()?))),
            0xc9 => Head::Ext(u32::from_be_bytes(self.array()?)),
            0xca => Head::F32(f32::from_be_bytes(self.array()?)),
            0xcb => Head::F64(f64::from_be_bytes(self.array()?)),
            0xcc => Head::UInt(u64::from(self.array::<1>()?[0])),
            0xcd => Head::UInt(u64::from(u16::from_be_bytes(self.array()?))),
            0xce => Head::UInt(u64::from(u32::from_be_bytes(self.array()?))),
            0xcf => Head::UInt(u64::from_be_bytes(self.array()?)),
            0xd0 => Head::Int(i64::from(i8::from_be_bytes(self.array()?))),
            0xd1 => Head::Int(i64::from(i16::from_be_bytes(self.array()?))),
            0xd2 => Head::Int(i64::from(i32::from_be_bytes(self.array()?))),
            0xd3 => Head::Int(i64::from_be_bytes(self.array()?)),
            0xd4 => Head::Ext(1),
            0xd5 => Head::Ext(2),
            0xd6 => Head::Ext(4),
            0xd7 => Head::Ext(8),
            0xd8 => Head::Ext(16),
            0xd9 => Head::Str(u32::from(self.array::<1>()?[0])),
            0xda => Head::Str(u32::from(u16::from_be_bytes(self.array()?))),
            0xdb => Head::Str(u32::from_be_bytes(self.array()?)),
            0xdc => Head::Array(u32::from(u16::from_be_bytes(self.array()?))),
            0xdd => Head::Array(u32::from_be_bytes(self.array()?)),
            0xde => Head::Map(u32::from(u16::from_be_bytes(self.array()?))),
            0xdf => Head::Map(u32::from_be_bytes(self.array()?)),
            0xe0..=0xff => Head::Int(i64::from(m as i8)),
            0xc1 => return Err(Error("reserved MessagePack marker 0xc1".into())),
        })
    }

    #[inline(never)]
    fn str_data(&mut self, len: u32) -> Result<&'de str> {
        std::str::from_utf8(self.take(len as usize)?).map_err(|e| Error(format!("invalid UTF-8: {e}")))
    }

    #[inline(never)]
    fn string(&mut self) -> Result<&'de str> {
        match self.head()? {
            Head::Str(n) => self.str_data(n),
            h => Err(mismatch(h, "a string")),
        }
    }

    /// Skips one whole value (for `IgnoredAny`): no visitor involved.
    #[inline(never)]
    fn skip(&mut self) -> Result<()> {
        let mut pending: u64 = 1;
        while pending > 0 {
            pending -= 1;
            match self.head()? {
                Head::Str(n) | Head::Bin(n) => {
                    self.take(n as usize)?;
                }
                Head::Ext(n) => {
                    self.take(n as usize + 1)?;
                }
                Head::Array(n) => pending += u64::from(n),
                Head::Map(n) => pending += 2 * u64::from(n),
                _ => {}
            }
        }
        Ok(())
    }

    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > DEPTH_MAX {
            return Err(Error("MessagePack nested too deeply".into()));
        }
        Ok(())
    }

    fn seq<V: Visitor<'de>>(&mut self, len: u32, v: V) -> Result<V::Value> {
        self.enter()?;
        let mut access = Compound { de: self, left: len };
        let out = v.visit_seq(&mut access)?;
        let left = access.left;
        self.depth -= 1;
        if left != 0 {
            return Err(Error(format!("length mismatch: {left} array elements left")));
        }
        Ok(out)
    }

    fn map<V: Visitor<'de>>(&mut self, len: u32, v: V) -> Result<V::Value> {
        self.enter()?;
        let mut access = Compound { de: self, left: len };
        let out = v.visit_map(&mut access)?;
        let left = access.left;
        self.depth -= 1;
        if left != 0 {
            return Err(Error(format!("length mismatch: {left} map entries left")));
        }
        Ok(out)
    }

    /// Integers and floats: the two or three `visit_*` a number type takes.
    fn number<V: Visitor<'de>>(&mut self, v: V) -> Result<V::Value> {
        match self.head()? {
            Head::UInt(n) => v.visit_u64(n),
            Head::Int(n) => v.visit_i64(n),
            Head::F32(x) => v.visit_f32(x),
            Head::F64(x) => v.visit_f64(x),
            h => Err(mismatch(h, "a number")),
        }
    }

    fn i128(&mut self) -> Result<i128> {
        match self.head()? {
            Head::UInt(n) => Ok(i128::from(n)),
            Head::Int(n) => Ok(i128::from(n)),
            Head::Bin(16) | Head::Array(16) => Ok(i128::from_be_bytes(self.array()?)),
            h => Err(mismatch(h, "a 128-bit integer")),
        }
    }
}

impl<'de> de::Deserializer<'de> for &mut Reader<'de> {
    type Error = Error;

    fn is_human_readable(&self) -> bool {
        false
    }

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        match self.head()? {
            Head::Nil => v.visit_unit(),
            Head::Bool(b) => v.visit_bool(b),
            Head::UInt(n) => v.visit_u64(n),
            Head::Int(n) => v.visit_i64(n),
            Head::F32(x) => v.visit_f32(x),
            Head::F64(x) => v.visit_f64(x),
            Head::Str(n) => v.visit_borrowed_str(self.str_data(n)?),
            Head::Bin(n) => v.visit_borrowed_bytes(self.take(n as usize)?),
            Head::Array(n) => self.seq(n, v),
            Head::Map(n) => self.map(n, v),
            h @ Head::Ext(_) => Err(mismatch(h, "a serde value")),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        match self.head()? {
            Head::Bool(b) => v.visit_bool(b),
            h => Err(mismatch(h, "a boolean")),
        }
    }

    fn deserialize_i8<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        self.number(v)
    }
    fn deserialize_i16<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        self.number(v)
    }
    fn deserialize_i32<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        self.number(v)
    }
    fn deserialize_i64<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        self.number(v)
    }
    fn deserialize_u8<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        self.number(v)
    }
    fn deserialize_u16<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        self.number(v)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        self.number(v)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        self.number(v)
    }
    fn deserialize_f32<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        self.number(v)
    }
    fn deserialize_f64<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        self.number(v)
    }

    fn deserialize_i128<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        v.visit_i128(self.i128()?)
    }

    fn deserialize_u128<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        v.visit_u128(self.i128()? as u128)
    }

    fn deserialize_char<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        v.visit_borrowed_str(self.string()?)
    }
    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        v.visit_borrowed_str(self.string()?)
    }
    fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        v.visit_borrowed_str(self.string()?)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        match self.head()? {
            Head::Bin(n) => v.visit_borrowed_bytes(self.take(n as usize)?),
            Head::Array(n) => self.seq(n, v),
            h => Err(mismatch(h, "bytes")),
        }
    }
    fn deserialize_byte_buf<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        self.deserialize_bytes(v)
    }

    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        if self.peek()? == 0xc0 {
            self.pos += 1;
            v.visit_none()
        } else {
            v.visit_some(self)
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        match self.head()? {
            Head::Nil | Head::Array(0) => v.visit_unit(),
            h => Err(mismatch(h, "nil")),
        }
    }
    fn deserialize_unit_struct<V: Visitor<'de>>(self, _name: &'static str, v: V) -> Result<V::Value> {
        self.deserialize_unit(v)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _name: &'static str, v: V) -> Result<V::Value> {
        v.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        match self.head()? {
            Head::Array(n) => self.seq(n, v),
            h => Err(mismatch(h, "an array")),
        }
    }
    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, v: V) -> Result<V::Value> {
        self.deserialize_seq(v)
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(self, _name: &'static str, _len: usize, v: V) -> Result<V::Value> {
        self.deserialize_seq(v)
    }

    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        match self.head()? {
            Head::Map(n) => self.map(n, v),
            h => Err(mismatch(h, "a map")),
        }
    }

    /// `to_vec_named` writes structs as maps, `to_vec` as arrays.
    fn deserialize_struct<V: Visitor<'de>>(self, _name: &'static str, _fields: &'static [&'static str], v: V) -> Result<V::Value> {
        match self.head()? {
            Head::Map(n) => self.map(n, v),
            Head::Array(n) => self.seq(n, v),
            h => Err(mismatch(h, "a struct")),
        }
    }

    /// A unit variant is its name; any other is a one-entry map from the name.
    fn deserialize_enum<V: Visitor<'de>>(self, _name: &'static str, _variants: &'static [&'static str], v: V) -> Result<V::Value> {
        let m = self.peek()?;
        if (0x80..=0x8f).contains(&m) || m == 0xde || m == 0xdf {
            match self.head()? {
                Head::Map(1) => {
                    self.enter()?;
                    let out = v.visit_enum(Variant { de: &mut *self, unit_only: false })?;
                    self.depth -= 1;
                    Ok(out)
                }
                h => Err(mismatch(h, "a one-entry map")),
            }
        } else {
            v.visit_enum(Variant { de: self, unit_only: true })
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        match self.head()? {
            Head::Str(n) => v.visit_borrowed_str(self.str_data(n)?),
            Head::UInt(n) => v.visit_u64(n),
            h => Err(mismatch(h, "an identifier")),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        self.skip()?;
        v.visit_unit()
    }
}

/// Arrays and maps: `left` elements or entries to go.
struct Compound<'a, 'de> {
    de: &'a mut Reader<'de>,
    left: u32,
}

impl<'de> de::SeqAccess<'de> for Compound<'_, 'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.de).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left as usize)
    }
}

impl<'de> de::MapAccess<'de> for Compound<'_, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.de).map(Some)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value> {
        seed.deserialize(&mut *self.de)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left as usize)
    }
}

struct Variant<'a, 'de> {
    de: &'a mut Reader<'de>,
    unit_only: bool,
}

impl<'de> de::EnumAccess<'de> for Variant<'_, 'de> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<(T::Value, Self)> {
        let name = seed.deserialize(&mut *self.de)?;
        Ok((name, self))
    }
}

impl<'de> de::VariantAccess<'de> for Variant<'_, 'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        if self.unit_only {
            return Ok(());
        }
        match self.de.head()? {
            Head::Nil => Ok(()),
            h => Err(mismatch(h, "nil")),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        if self.unit_only {
            return Err(Error("expected a one-entry map for a newtype variant".into()));
        }
        seed.deserialize(self.de)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, v: V) -> Result<V::Value> {
        if self.unit_only {
            return Err(Error("expected a one-entry map for a tuple variant".into()));
        }
        de::Deserializer::deserialize_seq(self.de, v)
    }

    fn struct_variant<V: Visitor<'de>>(self, fields: &'static [&'static str], v: V) -> Result<V::Value> {
        if self.unit_only {
            return Err(Error("expected a one-entry map for a struct variant".into()));
        }
        de::Deserializer::deserialize_struct(self.de, "", fields, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};
    use std::collections::BTreeMap;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    enum E {
        Unit,
        New(u32),
        Tup(i8, String),
        St { a: Option<u64>, b: Vec<u8>, c: u128, d: i128 },
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct S {
        x: f32,
        y: f64,
        s: String,
        m: BTreeMap<String, i64>,
        e: Vec<E>,
        o: Option<Option<bool>>,
        #[serde(serialize_with = "crate::core::exact_json::value")]
        v: serde_json::Value,
        #[serde(default)]
        missing: u16,
        u: (),
        ch: char,
    }

    fn sample() -> S {
        S {
            x: 1.5,
            y: -2.25e300,
            s: "héllo".into(),
            m: [("a".to_owned(), -1), ("b".to_owned(), i64::MIN), ("c".to_owned(), i64::MAX)].into(),
            e: vec![E::Unit, E::New(7), E::Tup(-3, "t".into()), E::St { a: Some(u64::MAX), b: vec![0, 255], c: u128::MAX, d: i128::MIN }, E::St { a: None, b: vec![], c: 0, d: -1 }],
            o: Some(Some(true)),
            v: serde_json::json!({"k": [1, -2, 3.5, "x", null, true, {"n": {}}]}),
            missing: 0,
            u: (),
            ch: 'é',
        }
    }

    #[test]
    fn reads_what_rmp_serde_writes() {
        let s = sample();
        let named = rmp_serde::to_vec_named(&s).unwrap();
        assert_eq!(from_slice::<S>(&named).unwrap(), s);
        let compact = rmp_serde::to_vec(&s).unwrap();
        assert_eq!(from_slice::<S>(&compact).unwrap(), s);
    }

    #[test]
    fn refuses_truncated_and_deep_input() {
        let named = rmp_serde::to_vec_named(&sample()).unwrap();
        for cut in 0..named.len() {
            assert!(from_slice::<S>(&named[..cut]).is_err(), "cut at {cut}");
        }
        let deep = vec![0x91u8; 5000];
        assert!(from_slice::<serde_json::Value>(&deep).is_err());
    }
}
