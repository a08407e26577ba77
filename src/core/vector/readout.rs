//! Reads a built `instant_distance::Hnsw` straight into CSR layers through
//! its `Serialize` impl, the only public view of its graph.
//!
//! Why a serializer and not an encoding: the old route wrote the graph as
//! MessagePack and decoded it into `Vec<Vec<u32>>`, which for a 65,536-point
//! segment held about 21 MB of bytes plus 18 MB of nested vectors at once,
//! on top of the graph itself. This sink keeps only the output: the links of
//! each node are filtered and truncated as they stream past.
//!
//! The shape it expects is `Hnsw`'s field order: `ef_search`, `points` (our
//! rows, each serialized as its u32 index), `zero` (layer 0, one fixed-size
//! array of point ids per node) and `layers` (upper layers bottom-up, each a
//! list of fixed-size nodes). Anything else is an error, never a panic.

use std::fmt;

use serde::ser::{self, Impossible, Serialize, SerializeSeq, SerializeStruct, SerializeTuple, SerializeTupleStruct};

use super::hnsw::Layer;

/// instant-distance's "no link" marker.
const INVALID: u32 = u32::MAX;

#[derive(Debug)]
pub(crate) struct ReadoutError(pub String);

impl fmt::Display for ReadoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReadoutError {}

impl ser::Error for ReadoutError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ReadoutError(msg.to_string())
    }
}

fn unexpected<T>(what: &str) -> Result<T, ReadoutError> {
    Err(ReadoutError(format!("unexpected {what} in the HNSW graph")))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Other,
    Points,
    Zero,
    Layers,
}

/// The serializer: `layers[0]` is layer 0, then upper layers bottom-up.
pub(crate) struct Sink {
    field: Field,
    /// Open sequences inside the current field.
    depth: usize,
    /// Links kept so far for the open node.
    kept: usize,
    zero_links_max: usize,
    upper_links_max: usize,
    pub layers: Vec<Layer>,
    /// `order[new] = old`: the row each graph id stands for.
    pub order: Vec<u32>,
}

impl Sink {
    pub fn new(rows: usize, zero_links_max: usize, upper_links_max: usize) -> Sink {
        let zero = Layer { offsets: Vec::with_capacity(rows + 1), links: Vec::with_capacity(rows * zero_links_max) };
        Sink { field: Field::Other, depth: 0, kept: 0, zero_links_max, upper_links_max, layers: vec![zero], order: Vec::with_capacity(rows) }
    }

    /// Depth at which a node's links are listed.
    fn node_depth(&self) -> Option<usize> {
        match self.field {
            Field::Zero => Some(2),
            Field::Layers => Some(3),
            _ => None,
        }
    }

    fn open(&mut self) {
        self.depth += 1;
        match (self.field, self.depth) {
            (Field::Zero, 1) => self.layers[0].offsets.push(0),
            (Field::Layers, 2) => self.layers.push(Layer { offsets: vec![0], links: Vec::new() }),
            _ => {}
        }
        if self.node_depth() == Some(self.depth) {
            self.kept = 0;
        }
    }

    fn close(&mut self) {
        if self.node_depth() == Some(self.depth) {
            if let Some(layer) = self.layers.last_mut() {
                layer.offsets.push(layer.links.len() as u32);
            }
        }
        self.depth = self.depth.saturating_sub(1);
    }

    fn id(&mut self, v: u32) -> Result<(), ReadoutError> {
        match self.field {
            Field::Points if self.depth == 1 => self.order.push(v),
            Field::Zero | Field::Layers if self.node_depth() == Some(self.depth) => {
                let max = if self.field == Field::Zero { self.zero_links_max } else { self.upper_links_max };
                if v != INVALID && self.kept < max {
                    if let Some(layer) = self.layers.last_mut() {
                        layer.links.push(v);
                    }
                    self.kept += 1;
                }
            }
            Field::Other => {}
            _ => return unexpected("point id"),
        }
        Ok(())
    }

    /// Drops links past the end of their layer (instant-distance never
    /// writes them; a bad graph would otherwise only fail validation) and
    /// returns the layers and the row order.
    pub fn finish(mut self) -> (Vec<Layer>, Vec<u32>) {
        for layer in &mut self.layers {
            // Layer 0 was reserved for full nodes: give back the slack.
            layer.links.shrink_to_fit();
            let n = layer.nodes() as u32;
            if layer.links.iter().all(|&t| t < n) {
                continue;
            }
            let (mut write, mut start) = (0usize, 0usize);
            for i in 1..layer.offsets.len() {
                let end = layer.offsets[i] as usize;
                for r in start..end {
                    if layer.links[r] < n {
                        layer.links[write] = layer.links[r];
                        write += 1;
                    }
                }
                start = end;
                layer.offsets[i] = write as u32;
            }
            layer.links.truncate(write);
            layer.links.shrink_to_fit();
        }
        (self.layers, self.order)
    }
}

impl ser::Serializer for &mut Sink {
    type Ok = ();
    type Error = ReadoutError;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Impossible<(), ReadoutError>;
    type SerializeMap = Impossible<(), ReadoutError>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), ReadoutError>;

    fn serialize_u32(self, v: u32) -> Result<(), ReadoutError> {
        self.id(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), ReadoutError> {
        match self.field {
            Field::Other => Ok(()),
            _ => self.id(u32::try_from(v).map_err(|_| ReadoutError(format!("point id {v} is past u32")))?),
        }
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, value: &T) -> Result<(), ReadoutError> {
        value.serialize(self)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self, ReadoutError> {
        self.open();
        Ok(self)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self, ReadoutError> {
        self.open();
        Ok(self)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self, ReadoutError> {
        self.open();
        Ok(self)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, ReadoutError> {
        if self.field != Field::Other || self.depth != 0 {
            return unexpected("struct");
        }
        Ok(self)
    }

    fn serialize_bool(self, _: bool) -> Result<(), ReadoutError> {
        unexpected("bool")
    }
    fn serialize_i8(self, _: i8) -> Result<(), ReadoutError> {
        unexpected("i8")
    }
    fn serialize_i16(self, _: i16) -> Result<(), ReadoutError> {
        unexpected("i16")
    }
    fn serialize_i32(self, _: i32) -> Result<(), ReadoutError> {
        unexpected("i32")
    }
    fn serialize_i64(self, _: i64) -> Result<(), ReadoutError> {
        unexpected("i64")
    }
    fn serialize_u8(self, _: u8) -> Result<(), ReadoutError> {
        unexpected("u8")
    }
    fn serialize_u16(self, _: u16) -> Result<(), ReadoutError> {
        unexpected("u16")
    }
    fn serialize_f32(self, _: f32) -> Result<(), ReadoutError> {
        unexpected("f32")
    }
    fn serialize_f64(self, _: f64) -> Result<(), ReadoutError> {
        unexpected("f64")
    }
    fn serialize_char(self, _: char) -> Result<(), ReadoutError> {
        unexpected("char")
    }
    fn serialize_str(self, _: &str) -> Result<(), ReadoutError> {
        unexpected("string")
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), ReadoutError> {
        unexpected("bytes")
    }
    fn serialize_none(self) -> Result<(), ReadoutError> {
        unexpected("none")
    }
    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<(), ReadoutError> {
        unexpected("option")
    }
    fn serialize_unit(self) -> Result<(), ReadoutError> {
        unexpected("unit")
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), ReadoutError> {
        unexpected("unit struct")
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), ReadoutError> {
        unexpected("enum")
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(self, _: &'static str, _: u32, _: &'static str, _: &T) -> Result<(), ReadoutError> {
        unexpected("enum")
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeTupleVariant, ReadoutError> {
        unexpected("enum")
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, ReadoutError> {
        unexpected("map")
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeStructVariant, ReadoutError> {
        unexpected("enum")
    }
}

impl SerializeStruct for &mut Sink {
    type Ok = ();
    type Error = ReadoutError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<(), ReadoutError> {
        self.field = match key {
            "points" => Field::Points,
            "zero" => Field::Zero,
            "layers" => Field::Layers,
            _ => Field::Other,
        };
        self.depth = 0;
        value.serialize(&mut **self)?;
        self.field = Field::Other;
        Ok(())
    }
    fn end(self) -> Result<(), ReadoutError> {
        Ok(())
    }
}

/// The three sequence kinds serde uses for `Vec`, arrays and tuple structs
/// all stream their elements the same way.
macro_rules! elements {
    ($trait:ident, $method:ident) => {
        impl $trait for &mut Sink {
            type Ok = ();
            type Error = ReadoutError;
            fn $method<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), ReadoutError> {
                value.serialize(&mut **self)
            }
            fn end(self) -> Result<(), ReadoutError> {
                self.close();
                Ok(())
            }
        }
    };
}

elements!(SerializeSeq, serialize_element);
elements!(SerializeTuple, serialize_element);
elements!(SerializeTupleStruct, serialize_field);

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;

    /// The shape of `instant_distance::Hnsw` in small: layer 0 nodes of 4
    /// slots, upper nodes of 2.
    #[derive(Serialize)]
    struct Id(u32);
    #[derive(Serialize)]
    struct Zero([Id; 4]);
    #[derive(Serialize)]
    struct Upper([Id; 2]);
    #[derive(Serialize)]
    struct Shape {
        ef_search: usize,
        points: Vec<u32>,
        zero: Vec<Zero>,
        layers: Vec<Vec<Upper>>,
    }

    fn z(l: [u32; 4]) -> Zero {
        Zero(l.map(Id))
    }

    #[test]
    fn links_are_truncated_unmarked_and_kept_inside_their_layer() {
        let shape = Shape {
            ef_search: 64,
            points: vec![2, 0, 1],
            zero: vec![z([1, 2, INVALID, INVALID]), z([0, 7, 2, INVALID]), z([1, 0, INVALID, INVALID])],
            layers: vec![vec![Upper([Id(1), Id(INVALID)]), Upper([Id(0), Id(2)])]],
        };
        let mut sink = Sink::new(3, 2, 2);
        shape.serialize(&mut sink).unwrap();
        let (layers, order) = sink.finish();
        assert_eq!(order, vec![2, 0, 1]);
        // Node 1 kept [0, 7] (two links max), then 7 fell outside the layer.
        assert_eq!(layers[0].offsets, vec![0, 2, 3, 5]);
        assert_eq!(layers[0].links, vec![1, 2, 0, 1, 0]);
        // The upper layer has two nodes, so its link to 2 goes.
        assert_eq!(layers[1].offsets, vec![0, 1, 2]);
        assert_eq!(layers[1].links, vec![1, 0]);
    }

    #[test]
    fn an_unexpected_shape_is_an_error_not_a_panic() {
        #[derive(Serialize)]
        struct Wrong {
            zero: Vec<String>,
        }
        let mut sink = Sink::new(1, 4, 2);
        let e = Wrong { zero: vec!["x".into()] }.serialize(&mut sink).unwrap_err();
        assert!(e.0.contains("string"), "{e}");
        let mut sink = Sink::new(1, 4, 2);
        assert!(vec![1u32].serialize(&mut sink).is_ok(), "a bare sequence is read as nothing, not a crash");
    }
}
