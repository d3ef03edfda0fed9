//! Quantisation as a sweep axis: the types a local judge's model file can be made in with
//! llama.cpp's own quantiser, which of them keeps the most precision (the default
//! reference), and what a GGUF file holds — each tensor's shape and type, read from its
//! header — so that a plan can say which tensors a type's block size does not fit (llama.cpp
//! gives those another type) and a report what a made file really is.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A level of the `quantization` axis: the judge's file as it is, or made in a type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Quantization {
    /// The model file as given.
    Source,
    F16,
    Q8_0,
    Q6K,
    Q5KM,
    Q5_1,
    Q5_0,
    Q4KM,
    Q4_1,
    Q4_0,
    Q3KM,
    Q2K,
}

// As written in an experiment file and shown: `source`, `Q8_0`, `Q4_K_M`, … (read whatever
// the case).
crate::names!(Quantization, ignore_case {
    Source => "source",
    F16 => "F16",
    Q8_0 => "Q8_0",
    Q6K => "Q6_K",
    Q5KM => "Q5_K_M",
    Q5_1 => "Q5_1",
    Q5_0 => "Q5_0",
    Q4KM => "Q4_K_M",
    Q4_1 => "Q4_1",
    Q4_0 => "Q4_0",
    Q3KM => "Q3_K_M",
    Q2K => "Q2_K",
});

impl Quantization {
    /// The tensor type its weight matrices are made in (llama.cpp's `ggml_type` name);
    /// none for the source. The `_M` mixes give some tensors more bits by design.
    pub fn tensor_type(self) -> Option<&'static str> {
        Some(match self {
            Quantization::Source => return None,
            Quantization::F16 => "F16",
            Quantization::Q8_0 => "Q8_0",
            Quantization::Q6K => "Q6_K",
            Quantization::Q5KM => "Q5_K",
            Quantization::Q5_1 => "Q5_1",
            Quantization::Q5_0 => "Q5_0",
            Quantization::Q4KM => "Q4_K",
            Quantization::Q4_1 => "Q4_1",
            Quantization::Q4_0 => "Q4_0",
            Quantization::Q3KM => "Q3_K",
            Quantization::Q2K => "Q2_K",
        })
    }

    /// Bits per weight of its main tensor type (ggml's block sizes), the order of
    /// precision: the source counts as the most precise.
    pub fn bits(self) -> f64 {
        match self {
            Quantization::Source => f64::INFINITY,
            q => q.tensor_type().and_then(bits_per_weight).unwrap_or(0.0),
        }
    }
}

impl Serialize for Quantization {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Quantization {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse()
            .map_err(|e| serde::de::Error::custom(format!("not a quantisation: {e}")))
    }
}

/// The most precise of `levels`: the source where it is one, else the most bits.
pub fn most_precise(levels: &[Quantization]) -> Option<Quantization> {
    levels
        .iter()
        .copied()
        .max_by(|a, b| a.bits().total_cmp(&b.bits()))
}

/// ggml's types by id, with their block size (weights per block) and bytes per block.
const TYPES: &[(u32, &str, u64, u64)] = &[
    (0, "F32", 1, 4),
    (1, "F16", 1, 2),
    (2, "Q4_0", 32, 18),
    (3, "Q4_1", 32, 20),
    (6, "Q5_0", 32, 22),
    (7, "Q5_1", 32, 24),
    (8, "Q8_0", 32, 34),
    (9, "Q8_1", 32, 36),
    (10, "Q2_K", 256, 84),
    (11, "Q3_K", 256, 110),
    (12, "Q4_K", 256, 144),
    (13, "Q5_K", 256, 176),
    (14, "Q6_K", 256, 210),
    (15, "Q8_K", 256, 292),
    (16, "IQ2_XXS", 256, 66),
    (17, "IQ2_XS", 256, 74),
    (18, "IQ3_XXS", 256, 98),
    (19, "IQ1_S", 256, 50),
    (20, "IQ4_NL", 32, 18),
    (21, "IQ3_S", 256, 110),
    (22, "IQ2_S", 256, 82),
    (23, "IQ4_XS", 256, 136),
    (24, "I8", 1, 1),
    (25, "I16", 1, 2),
    (26, "I32", 1, 4),
    (27, "I64", 1, 8),
    (28, "F64", 1, 8),
    (29, "IQ1_M", 256, 56),
    (30, "BF16", 1, 2),
    (34, "TQ1_0", 256, 54),
    (35, "TQ2_0", 256, 66),
];

fn type_by_name(name: &str) -> Option<&'static (u32, &'static str, u64, u64)> {
    TYPES.iter().find(|t| t.1 == name)
}

/// Bits per weight of a ggml type.
pub fn bits_per_weight(name: &str) -> Option<f64> {
    type_by_name(name).map(|&(_, _, block, bytes)| bytes as f64 * 8.0 / block as f64)
}

/// Weights per block of a ggml type: a tensor's rows must be a multiple of it.
pub fn block_size(name: &str) -> Option<u64> {
    type_by_name(name).map(|t| t.2)
}

/// One tensor of a GGUF file.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    pub name: String,
    /// Its dimensions, the row length (`ne[0]`) first.
    pub dims: Vec<u64>,
    /// Its ggml type's name (`Q4_0`), or `type N` for one this table does not know.
    pub kind: String,
}

/// What a GGUF file's header says of its tensors.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub version: u32,
    pub tensors: Vec<Tensor>,
}

impl Header {
    /// How many tensors of each type, by type name.
    pub fn census(&self) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for t in &self.tensors {
            *out.entry(t.kind.clone()).or_default() += 1;
        }
        out
    }

    /// The census in words: `150 Q4_0, 61 F32, 30 Q2_K`, the most common first.
    pub fn describe(&self) -> String {
        let mut counts: Vec<(String, usize)> = self.census().into_iter().collect();
        counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        counts
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The weight matrices (tensors of two or more dimensions) whose rows a `level`'s
    /// main type's blocks do not fit: llama.cpp makes them another type (Q4_0 for Q2_K
    /// and Q3_K, Q5_0 for Q4_K, Q5_1 for Q5_K, Q8_0 for Q6_K). With the row lengths that
    /// cause it.
    pub fn misfits(&self, level: Quantization) -> (usize, Vec<u64>) {
        let Some(block) = level.tensor_type().and_then(block_size) else {
            return (0, Vec::new());
        };
        let mut rows: Vec<u64> = Vec::new();
        let mut n = 0;
        for t in self.tensors.iter().filter(|t| t.dims.len() >= 2) {
            if t.dims[0] % block != 0 {
                n += 1;
                if !rows.contains(&t.dims[0]) {
                    rows.push(t.dims[0]);
                }
            }
        }
        rows.sort_unstable();
        (n, rows)
    }
}

/// A GGUF header that cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("not a GGUF file this reader knows: {0}")]
pub struct GgufError(String);

/// Reads the header of a GGUF file from its first bytes (its metadata and tensor table;
/// the tensors' data is not needed). An error where the bytes end early or are not GGUF.
pub fn read_header(bytes: &[u8]) -> Result<Header, GgufError> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(4)? != b"GGUF" {
        return Err(GgufError("no GGUF magic".into()));
    }
    let version = r.u32()?;
    if !(2..=3).contains(&version) {
        return Err(GgufError(format!("version {version}")));
    }
    let n_tensors = r.u64()?;
    let n_kv = r.u64()?;
    for _ in 0..n_kv {
        r.string()?;
        let kind = r.u32()?;
        r.skip_value(kind)?;
    }
    let mut tensors = Vec::new();
    for _ in 0..n_tensors {
        let name = r.string()?;
        let n_dims = r.u32()?;
        if n_dims > 8 {
            return Err(GgufError(format!("tensor {name} has {n_dims} dimensions")));
        }
        let dims = (0..n_dims)
            .map(|_| r.u64())
            .collect::<Result<Vec<_>, _>>()?;
        let id = r.u32()?;
        r.u64()?; // its data's offset
        let kind = TYPES
            .iter()
            .find(|t| t.0 == id)
            .map_or(format!("type {id}"), |t| t.1.to_string());
        tensors.push(Tensor { name, dims, kind });
    }
    Ok(Header { version, tensors })
}

/// A cursor over little-endian GGUF bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: u64) -> Result<&[u8], GgufError> {
        let end = usize::try_from(n)
            .ok()
            .and_then(|n| self.at.checked_add(n))
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| GgufError(format!("the header ends early at byte {}", self.at)))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32, GgufError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }

    fn u64(&mut self) -> Result<u64, GgufError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }

    fn string(&mut self) -> Result<String, GgufError> {
        let n = self.u64()?;
        Ok(String::from_utf8_lossy(self.take(n)?).into_owned())
    }

    /// Skips a metadata value of GGUF type `kind`.
    fn skip_value(&mut self, kind: u32) -> Result<(), GgufError> {
        match kind {
            0 | 1 | 7 => self.take(1).map(drop),
            2 | 3 => self.take(2).map(drop),
            4..=6 => self.take(4).map(drop),
            10..=12 => self.take(8).map(drop),
            8 => self.string().map(drop),
            9 => {
                let inner = self.u32()?;
                let n = self.u64()?;
                for _ in 0..n {
                    self.skip_value(inner)?;
                }
                Ok(())
            }
            k => Err(GgufError(format!("metadata of type {k}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GGUF header: one string and one array of strings in the metadata, then tensors.
    fn header(tensors: &[(&str, &[u64], u32)]) -> Vec<u8> {
        let mut b = b"GGUF".to_vec();
        b.extend(3u32.to_le_bytes());
        b.extend((tensors.len() as u64).to_le_bytes());
        b.extend(2u64.to_le_bytes());
        let string = |b: &mut Vec<u8>, s: &str| {
            b.extend((s.len() as u64).to_le_bytes());
            b.extend(s.as_bytes());
        };
        string(&mut b, "general.name");
        b.extend(8u32.to_le_bytes());
        string(&mut b, "tiny");
        string(&mut b, "tokenizer.ggml.tokens");
        b.extend(9u32.to_le_bytes());
        b.extend(8u32.to_le_bytes());
        b.extend(2u64.to_le_bytes());
        string(&mut b, "a");
        string(&mut b, "b");
        for (name, dims, kind) in tensors {
            string(&mut b, name);
            b.extend((dims.len() as u32).to_le_bytes());
            for d in *dims {
                b.extend(d.to_le_bytes());
            }
            b.extend(kind.to_le_bytes());
            b.extend(0u64.to_le_bytes());
        }
        b
    }

    #[test]
    fn a_header_is_read_with_each_tensors_shape_and_type() {
        let bytes = header(&[
            ("token_embd.weight", &[576, 49152], 3),
            ("blk.0.ffn_down.weight", &[1536, 576], 3),
            ("blk.0.attn_norm.weight", &[576], 0),
        ]);
        let h = read_header(&bytes).unwrap();
        assert_eq!(h.version, 3);
        assert_eq!(h.tensors[0].kind, "Q4_1");
        assert_eq!(h.tensors[1].dims, vec![1536, 576]);
        assert_eq!(h.describe(), "2 Q4_1, 1 F32");
        // Q2_K's blocks hold 256 weights: rows of 576 do not fit them, rows of 1536 do.
        assert_eq!(h.misfits(Quantization::Q2K), (1, vec![576]));
        assert_eq!(h.misfits(Quantization::Q8_0), (0, vec![]));
        assert_eq!(h.misfits(Quantization::Source), (0, vec![]));
        for n in [0, 3, 20, bytes.len() - 1] {
            assert!(read_header(&bytes[..n]).is_err(), "{n} bytes");
        }
    }

    #[test]
    fn the_axis_offers_every_level() {
        let choices = crate::sweep::Axis::Quantization.info().choices;
        assert_eq!(choices, Quantization::ALL.map(|q| q.name()));
    }

    #[test]
    fn levels_are_named_and_ordered_by_precision() {
        assert_eq!("q4_k_m".parse(), Ok(Quantization::Q4KM));
        assert!("Q9".parse::<Quantization>().is_err());
        assert_eq!(bits_per_weight("Q4_0"), Some(4.5));
        assert_eq!(bits_per_weight("Q8_0"), Some(8.5));
        assert_eq!(
            most_precise(&[Quantization::Q4_0, Quantization::Q8_0, Quantization::Q2K]),
            Some(Quantization::Q8_0)
        );
        assert_eq!(
            most_precise(&[Quantization::Q4_0, Quantization::Source]),
            Some(Quantization::Source)
        );
    }
}
