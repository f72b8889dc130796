//! A bounded reader of a GGUF file's header: the checks a file passes before
//! llama.cpp sees it, and the few metadata values the engine needs beforehand.
//!
//! A model file is untrusted input (a `--model-file` from anywhere, a download cut
//! short, a disk error): llama.cpp's own loader is C++ and a malformed file should
//! never reach it. This reader is plain Rust over the file's bytes, every length
//! checked against what is left of the file, so a corrupt or truncated file is a
//! clear [`GgufError`] and never a crash. It reads the magic, the version, the
//! metadata (keeping the scalar values and short strings, skipping arrays such as
//! the tokenizer's vocabulary) and the tensor table, and checks that every tensor
//! of a known type lies inside the file: a download cut at 90 % fails here, in a
//! millisecond, instead of inside llama.cpp.
//!
//! It also gives the numbers the memory check needs before loading (layers, heads,
//! the trained context; [`memory_needed`] against [`memory_available`]) and the chat
//! template, without mapping a gigabyte of weights.
//!
//! A well-formed file can still be one llama.cpp cannot run: it answers some of
//! those with an exception (an error we report) but others with `GGML_ASSERT`, which
//! aborts the whole process (a `tokenizer.ggml.model` of `none` at the first
//! tokenization; a weight of an intermediate type such as Q8_1 at the first
//! multiplication). [`check_runnable`] refuses those from the header, against what
//! the vendored llama.cpp supports: the tokenizer models its `llama-vocab.cpp`
//! loads, the weight types its CPU backend can multiply, F32 for one-dimensional
//! tensors (norms and biases, which it only adds and multiplies as F32), a token
//! table as long as the embedding's rows, and hyperparameters it asserts on: a norm
//! epsilon that is NaN or negative (`GGML_ASSERT(eps >= 0.0f)` at the first answer,
//! which in `ground serve` would end every client's request at once), a rope base
//! or scale that is not a finite positive number, a rope scaling type it does not
//! know (asserted while loading).
//!
//! Every string from the file that a message quotes (a key, the architecture) is
//! made safe for a terminal and cut short first ([`shown`]): the file may come from
//! anywhere.

use std::collections::HashMap;
use std::io::{BufReader, Read, Seek};
use std::path::Path;

/// The first four bytes of every GGUF file.
pub const MAGIC: &[u8; 4] = b"GGUF";

/// Longest metadata string kept (a chat template is a few KB; longer values are
/// skipped, not kept).
const MAX_KEPT_STRING: u64 = 256 * 1024;

/// Most dimensions of one tensor (ggml's `GGML_MAX_DIMS`).
const MAX_DIMS: u32 = 4;

/// Longest tensor name llama.cpp's loader accepts (`GGML_MAX_NAME` less its NUL).
const MAX_TENSOR_NAME: u64 = 63;

/// Characters of a file's string quoted in a message.
const SHOWN_CHARS: usize = 80;

/// The tokenizer models the vendored llama.cpp loads (`llama_vocab::impl::load`),
/// `none`/`no_vocab` (a model without a vocabulary, which aborts at the first
/// tokenization) and `test` left out.
const TOKENIZER_MODELS: &[&str] = &[
    "llama",
    "bert",
    "gpt2",
    "hybriddna",
    "whitespace",
    "t5",
    "rwkv",
    "plamo2",
    "gemma4",
];

/// Why a file is not a usable GGUF model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GgufError {
    /// The file could not be opened or read.
    #[error("cannot read the file: {0}")]
    Io(String),
    /// The first bytes are not `GGUF`.
    #[error("not a GGUF model file (it does not start with \"GGUF\")")]
    NotGguf,
    /// A GGUF version this reader does not know (1 is obsolete, >3 is newer).
    #[error("GGUF version {0} is not supported (versions 2 and 3 are)")]
    Version(u32),
    /// The file ends before its header, metadata or tensor data does.
    #[error("the file is truncated: {0}")]
    Truncated(String),
    /// A count, length or type in the header is impossible.
    #[error("the file is corrupt: {0}")]
    Corrupt(String),
    /// A well-formed file that llama.cpp cannot run (it would abort the process).
    #[error("llama.cpp cannot run it: {0}")]
    Unsupported(String),
}

/// `text` from the file as a message may quote it: no control or bidi characters,
/// one line, at most [`SHOWN_CHARS`] characters.
pub fn shown(text: &str) -> String {
    let head: String = text.chars().take(SHOWN_CHARS * 4).collect();
    crate::text::shorten(&crate::text::sanitize_line(&head), SHOWN_CHARS)
}

/// One entry of the tensor table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorInfo {
    /// Its name, e.g. `blk.0.attn_norm.weight`.
    pub name: String,
    /// Its dimensions, innermost first (ggml's `ne`).
    pub dims: Vec<u64>,
    /// Its ggml type number (0 = F32, 8 = Q8_0, ...).
    pub ggml_type: u32,
}

/// A metadata value kept from the header.
#[derive(Debug, Clone, PartialEq)]
pub enum MetaValue {
    /// Any integer type (booleans too), widened.
    Int(i128),
    /// A float type.
    Float(f64),
    /// A string no longer than the kept limit.
    Str(String),
}

/// What the header says, read and checked.
#[derive(Debug, Clone)]
pub struct GgufInfo {
    /// The GGUF version (2 or 3).
    pub version: u32,
    /// Tensors in the file.
    pub tensors: u64,
    /// The file's size in bytes.
    pub file_bytes: u64,
    /// Scalar metadata and short strings by key (arrays are skipped).
    pub meta: HashMap<String, MetaValue>,
    /// The arrays' element type and length by key (their elements are skipped).
    pub arrays: HashMap<String, (u32, u64)>,
    /// The tensor table.
    pub tensor_table: Vec<TensorInfo>,
}

impl GgufInfo {
    /// A metadata integer.
    pub fn int(&self, key: &str) -> Option<u64> {
        match self.meta.get(key) {
            Some(MetaValue::Int(n)) => u64::try_from(*n).ok(),
            _ => None,
        }
    }

    /// A metadata string.
    pub fn str(&self, key: &str) -> Option<&str> {
        match self.meta.get(key) {
            Some(MetaValue::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// `general.architecture`, e.g. `llama` or `qwen3`.
    pub fn architecture(&self) -> Option<&str> {
        self.str("general.architecture")
    }

    /// An architecture-scoped integer, e.g. `block_count` for `qwen3.block_count`.
    pub fn arch_int(&self, key: &str) -> Option<u64> {
        self.int(&format!("{}.{key}", self.architecture()?))
    }

    /// The context length the model was trained for.
    pub fn trained_context(&self) -> Option<u64> {
        self.arch_int("context_length")
    }

    /// The chat template stored in the file (`tokenizer.chat_template`).
    pub fn chat_template(&self) -> Option<&str> {
        self.str("tokenizer.chat_template")
    }

    /// Bytes of key/value cache per token of context (f16 keys and values of every
    /// layer), when the header says enough to compute it.
    pub fn kv_bytes_per_token(&self) -> Option<u64> {
        let layers = self.arch_int("block_count")?;
        let heads = self.arch_int("attention.head_count")?.max(1);
        let kv_heads = self.arch_int("attention.head_count_kv").unwrap_or(heads);
        let key_len = self
            .arch_int("attention.key_length")
            .or_else(|| Some(self.arch_int("embedding_length")? / heads))?;
        let value_len = self.arch_int("attention.value_length").unwrap_or(key_len);
        layers
            .checked_mul(kv_heads)?
            .checked_mul(key_len.checked_add(value_len)?)?
            .checked_mul(2)
    }
}

/// Working memory beyond weights and cache that a loaded model needs (compute
/// buffers, the vocabulary, the grammar), as counted for the memory check.
const WORKING_MEMORY: u64 = 256 * 1024 * 1024;

/// Bytes the model in `info` needs with a window of `context_tokens`.
pub fn memory_needed(info: &GgufInfo, context_tokens: u32) -> u64 {
    let window = u64::from(context_tokens).min(info.trained_context().unwrap_or(u64::MAX));
    // Without the numbers for the cache, a quarter of the weights is a fair guess.
    let cache = info
        .kv_bytes_per_token()
        .map(|per| per.saturating_mul(window))
        .unwrap_or(info.file_bytes / 4);
    info.file_bytes
        .saturating_add(cache)
        .saturating_add(WORKING_MEMORY)
}

/// `MemAvailable` from /proc/meminfo, in bytes; `None` where there is none.
pub fn memory_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_meminfo(&text)
}

fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line
        .trim_start_matches("MemAvailable:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kb.checked_mul(1024)
}

/// Reads and checks the header of the GGUF file at `path`.
pub fn read(path: &Path) -> Result<GgufInfo, GgufError> {
    let file = std::fs::File::open(path).map_err(|e| GgufError::Io(e.to_string()))?;
    let len = file
        .metadata()
        .map_err(|e| GgufError::Io(e.to_string()))?
        .len();
    let mut reader = Reader {
        inner: BufReader::with_capacity(1 << 16, file),
        pos: 0,
        len,
        arrays: HashMap::new(),
    };
    reader.parse()
}

/// The name of a ggml type that the CPU backend can multiply as a weight (it has a
/// `vec_dot` in ggml-cpu's type traits); `None` for the others: intermediate types
/// (Q8_1, Q8_K), integers, F64 and numbers this llama.cpp does not know.
fn weight_type(ggml_type: u32) -> Option<&'static str> {
    Some(match ggml_type {
        0 => "F32",
        1 => "F16",
        2 => "Q4_0",
        3 => "Q4_1",
        6 => "Q5_0",
        7 => "Q5_1",
        8 => "Q8_0",
        10 => "Q2_K",
        11 => "Q3_K",
        12 => "Q4_K",
        13 => "Q5_K",
        14 => "Q6_K",
        16 => "IQ2_XXS",
        17 => "IQ2_XS",
        18 => "IQ3_XXS",
        19 => "IQ1_S",
        20 => "IQ4_NL",
        21 => "IQ3_S",
        22 => "IQ2_S",
        23 => "IQ4_XS",
        29 => "IQ1_M",
        30 => "BF16",
        34 => "TQ1_0",
        35 => "TQ2_0",
        39 => "MXFP4",
        40 => "NVFP4",
        41 => "Q1_0",
        42 => "Q2_0",
        _ => return None,
    })
}

/// What a refused ggml type is called in messages.
fn refused_type_name(ggml_type: u32) -> String {
    match ggml_type {
        9 => "Q8_1".into(),
        15 => "Q8_K".into(),
        24 => "I8".into(),
        25 => "I16".into(),
        26 => "I32".into(),
        27 => "I64".into(),
        28 => "F64".into(),
        other => format!("type {other}"),
    }
}

/// The rope scaling types the vendored llama.cpp knows (`LLAMA_ROPE_SCALING_TYPES`);
/// any other `rope.scaling.type` fails its `GGML_ASSERT` while the model loads.
const ROPE_SCALING_TYPES: &[&str] = &["none", "linear", "yarn", "longrope"];

/// How a float hyperparameter must be for llama.cpp to run the model without an
/// abort (or a reply of NaNs).
#[derive(Clone, Copy)]
enum Bound {
    /// A norm's epsilon: finite and 0 or more (ggml's norms assert `eps >= 0.0f`,
    /// which NaN fails too, at the first answer).
    Epsilon,
    /// A rope frequency base: finite and above 0 (`powf(base, -2/n)` of 0 or of a
    /// negative number is infinite or NaN).
    Positive,
    /// A rope scaling factor: finite and 0 or more (llama.cpp reads 0 as "no
    /// scaling" and takes the inverse of any other value).
    ZeroOrMore,
}

/// The float hyperparameters checked, under the architecture's prefix, with what
/// each must be and the value a good file typically has (for the message).
const FLOAT_KEYS: &[(&str, Bound, &str)] = &[
    ("attention.layer_norm_epsilon", Bound::Epsilon, "1e-5"),
    (
        "attention.layer_norm_rms_epsilon",
        Bound::Epsilon,
        "1e-5 or 1e-6",
    ),
    ("attention.group_norm_epsilon", Bound::Epsilon, "1e-5"),
    ("rope.freq_base", Bound::Positive, "10000 or more"),
    ("rope.freq_base_swa", Bound::Positive, "10000 or more"),
    ("rope.scaling.factor", Bound::ZeroOrMore, "1 to 32"),
    ("rope.scale_linear", Bound::ZeroOrMore, "1 to 32"),
];

/// Refuses the float hyperparameters llama.cpp would abort on (or compute NaNs from):
/// a non-finite or negative norm epsilon, a non-finite or non-positive rope base, a
/// non-finite or negative rope scale; and a rope scaling type it does not know.
fn check_hyperparameters(info: &GgufInfo, arch: &str) -> Result<(), GgufError> {
    for &(name, bound, typical) in FLOAT_KEYS {
        let key = format!("{arch}.{name}");
        let Some(MetaValue::Float(value)) = info.meta.get(&key) else {
            continue;
        };
        let value = *value;
        let (fine, must) = match bound {
            Bound::Epsilon => (
                value.is_finite() && value >= 0.0,
                "a finite number, 0 or more",
            ),
            Bound::Positive => (value.is_finite() && value > 0.0, "a finite number above 0"),
            Bound::ZeroOrMore => (
                value.is_finite() && value >= 0.0,
                "a finite number, 0 (no scaling) or more",
            ),
        };
        if !fine {
            return Err(GgufError::Unsupported(format!(
                "its {} is {}, which would stop the whole process in llama.cpp at the first answer: it must be {must} (typically {typical}); the file was written wrongly: convert the model again, or use another copy or a catalogue model",
                shown(&key),
                shown_float(value)
            )));
        }
    }
    let key = format!("{arch}.rope.scaling.type");
    if let Some(MetaValue::Str(kind)) = info.meta.get(&key)
        && !ROPE_SCALING_TYPES.contains(&kind.as_str())
    {
        return Err(GgufError::Unsupported(format!(
            "its {} {:?} is not one llama.cpp knows ({}), which would stop the whole process while loading: convert the model again, or use another copy or a catalogue model",
            shown(&key),
            shown(kind),
            ROPE_SCALING_TYPES.join(", ")
        )));
    }
    Ok(())
}

/// A float from the file as a message shows it (`NaN`, `inf`, `-1e-5`).
fn shown_float(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else {
        // f32 in the file: its shortest form, not the widened f64's digits.
        format!("{}", value as f32)
    }
}

/// Refuses a file that reads well but that llama.cpp cannot run, where it would
/// abort the process instead of returning an error (see the module's doc): an
/// architecture that is not a plain name, a tokenizer model llama.cpp does not load
/// (or none), no token table or one shorter than the embedding, a weight of a type
/// the CPU cannot multiply, a one-dimensional tensor that is not F32, or a norm
/// epsilon, rope base or rope scale that ggml asserts on or computes NaNs from
/// ([`check_hyperparameters`]).
pub fn check_runnable(info: &GgufInfo) -> Result<(), GgufError> {
    let refuse = |reason: String| Err(GgufError::Unsupported(reason));
    match info.meta.get("general.architecture") {
        Some(MetaValue::Str(arch))
            if !arch.is_empty()
                && arch.len() <= 64
                && arch
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b)) => {}
        Some(MetaValue::Str(arch)) => {
            return refuse(format!(
                "general.architecture {:?} is not an architecture name",
                shown(arch)
            ));
        }
        _ => return refuse("it has no general.architecture".into()),
    }
    if let Some(arch) = info.architecture() {
        check_hyperparameters(info, arch)?;
    }
    match info.meta.get("tokenizer.ggml.model") {
        Some(MetaValue::Str(model)) if TOKENIZER_MODELS.contains(&model.as_str()) => {}
        Some(MetaValue::Str(model)) => {
            return refuse(format!(
                "its tokenizer.ggml.model {:?} is not one llama.cpp can tokenize with ({})",
                shown(model),
                TOKENIZER_MODELS.join(", ")
            ));
        }
        _ => return refuse("it has no tokenizer (tokenizer.ggml.model)".into()),
    }
    let tokens = match info.arrays.get("tokenizer.ggml.tokens") {
        Some(&(8, count)) if count > 0 => count,
        _ => return refuse("it has no token table (tokenizer.ggml.tokens)".into()),
    };
    for tensor in &info.tensor_table {
        let name = shown(&tensor.name);
        if tensor.dims.len() == 1 {
            if tensor.ggml_type != 0 {
                return refuse(format!(
                    "the one-dimensional tensor {name} is {}, not F32",
                    weight_type(tensor.ggml_type)
                        .map(str::to_string)
                        .unwrap_or_else(|| refused_type_name(tensor.ggml_type))
                ));
            }
        } else if weight_type(tensor.ggml_type).is_none() {
            return refuse(format!(
                "the tensor {name} is of type {}, which llama.cpp's CPU backend cannot compute with",
                refused_type_name(tensor.ggml_type)
            ));
        }
        if tensor.name == "token_embd.weight"
            && let Some(&rows) = tensor.dims.get(1)
            && rows != tokens
        {
            return refuse(format!(
                "its embedding has {rows} rows but its token table has {tokens} tokens"
            ));
        }
    }
    Ok(())
}

/// Bytes per block and elements per block of the ggml tensor types whose layout is
/// certain; other types are only checked to start inside the file.
fn type_layout(ggml_type: u32) -> Option<(u64, u64)> {
    Some(match ggml_type {
        0 => (4, 1),      // F32
        1 => (2, 1),      // F16
        2 => (18, 32),    // Q4_0
        3 => (20, 32),    // Q4_1
        6 => (22, 32),    // Q5_0
        7 => (24, 32),    // Q5_1
        8 => (34, 32),    // Q8_0
        10 => (84, 256),  // Q2_K
        11 => (110, 256), // Q3_K
        12 => (144, 256), // Q4_K
        13 => (176, 256), // Q5_K
        14 => (210, 256), // Q6_K
        15 => (292, 256), // Q8_K
        24 => (1, 1),     // I8
        25 => (2, 1),     // I16
        26 => (4, 1),     // I32
        27 => (8, 1),     // I64
        28 => (8, 1),     // F64
        30 => (2, 1),     // BF16
        _ => return None,
    })
}

struct Reader<R> {
    inner: R,
    pos: u64,
    len: u64,
    /// Arrays met in the metadata: element type and length by key.
    arrays: HashMap<String, (u32, u64)>,
}

impl<R: Read + Seek> Reader<R> {
    fn left(&self) -> u64 {
        self.len.saturating_sub(self.pos)
    }

    fn need(&self, bytes: u64, what: &str) -> Result<(), GgufError> {
        if bytes > self.left() {
            return Err(GgufError::Truncated(format!(
                "{what} needs {bytes} bytes at offset {}, the file has {} left",
                self.pos,
                self.left()
            )));
        }
        Ok(())
    }

    fn bytes<const N: usize>(&mut self, what: &str) -> Result<[u8; N], GgufError> {
        self.need(N as u64, what)?;
        let mut buf = [0u8; N];
        self.inner
            .read_exact(&mut buf)
            .map_err(|e| GgufError::Io(e.to_string()))?;
        self.pos += N as u64;
        Ok(buf)
    }

    fn u32(&mut self, what: &str) -> Result<u32, GgufError> {
        self.bytes::<4>(what).map(u32::from_le_bytes)
    }

    fn u64(&mut self, what: &str) -> Result<u64, GgufError> {
        self.bytes::<8>(what).map(u64::from_le_bytes)
    }

    fn skip(&mut self, bytes: u64, what: &str) -> Result<(), GgufError> {
        self.need(bytes, what)?;
        let offset = i64::try_from(bytes).map_err(|_| GgufError::Corrupt(what.into()))?;
        self.inner
            .seek_relative(offset)
            .map_err(|e| GgufError::Io(e.to_string()))?;
        self.pos += bytes;
        Ok(())
    }

    /// A string: kept when at most `keep` bytes, else skipped (`None`).
    fn string(&mut self, what: &str, keep: u64) -> Result<Option<String>, GgufError> {
        let len = self.u64(what)?;
        self.need(len, what)?;
        if len > keep {
            self.skip(len, what)?;
            return Ok(None);
        }
        let mut buf = vec![0u8; usize::try_from(len).unwrap_or(0)];
        self.inner
            .read_exact(&mut buf)
            .map_err(|e| GgufError::Io(e.to_string()))?;
        self.pos += len;
        Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
    }

    fn parse(&mut self) -> Result<GgufInfo, GgufError> {
        if self.len < 4 {
            return Err(GgufError::NotGguf);
        }
        if &self.bytes::<4>("the magic")? != MAGIC {
            return Err(GgufError::NotGguf);
        }
        let version = self.u32("the version")?;
        if !(2..=3).contains(&version) {
            return Err(GgufError::Version(version));
        }
        let tensors = self.u64("the tensor count")?;
        let kv_count = self.u64("the metadata count")?;
        // Each metadata entry takes at least 13 bytes, each tensor at least 28: counts
        // beyond what the file could hold are corrupt, not a reason to loop for ever.
        if kv_count > self.left() / 13 || tensors > self.left() / 28 {
            return Err(GgufError::Truncated(format!(
                "its {kv_count} metadata entries and {tensors} tensors cannot fit in its {} bytes",
                self.len
            )));
        }
        let mut meta = HashMap::new();
        for _ in 0..kv_count {
            let key = self
                .string("a metadata key", 64 * 1024)?
                .ok_or_else(|| GgufError::Corrupt("a metadata key is too long".into()))?;
            let value_type = self.u32("a metadata type")?;
            if let Some(value) = self.value(value_type, &key, 0)? {
                meta.insert(key, value);
            }
        }
        let alignment = match meta.get("general.alignment") {
            Some(MetaValue::Int(n)) => u64::try_from(*n).unwrap_or(0),
            _ => 32,
        };
        if alignment == 0 || !alignment.is_power_of_two() {
            return Err(GgufError::Corrupt(format!(
                "general.alignment {alignment} is not a power of two"
            )));
        }
        // The tensor table: where each tensor's data lies, relative to the data section.
        let mut ends: Vec<u64> = Vec::new();
        let mut starts_max = 0u64;
        let mut tensor_table = Vec::new();
        for _ in 0..tensors {
            let name = self
                .string("a tensor name", MAX_TENSOR_NAME)?
                .ok_or_else(|| GgufError::Corrupt("a tensor name is too long".into()))?;
            let dims = self.u32("a tensor's dimension count")?;
            if dims == 0 || dims > MAX_DIMS {
                return Err(GgufError::Corrupt(format!(
                    "a tensor has {dims} dimensions"
                )));
            }
            let mut elements: u64 = 1;
            let mut shape = Vec::new();
            for _ in 0..dims {
                let d = self.u64("a tensor dimension")?;
                shape.push(d);
                elements = elements
                    .checked_mul(d)
                    .ok_or_else(|| GgufError::Corrupt("a tensor's size overflows".into()))?;
            }
            let ggml_type = self.u32("a tensor type")?;
            tensor_table.push(TensorInfo {
                name,
                dims: shape,
                ggml_type,
            });
            let offset = self.u64("a tensor offset")?;
            starts_max = starts_max.max(offset);
            if let Some((block_bytes, block_elements)) = type_layout(ggml_type) {
                let bytes = (elements / block_elements)
                    .checked_mul(block_bytes)
                    .and_then(|b| b.checked_add(offset))
                    .ok_or_else(|| GgufError::Corrupt("a tensor's size overflows".into()))?;
                ends.push(bytes);
            }
        }
        let data_start = self.pos.div_ceil(alignment) * alignment;
        let data_end = ends.iter().copied().max().unwrap_or(0).max(starts_max);
        if tensors > 0 && data_start.saturating_add(data_end) > self.len {
            return Err(GgufError::Truncated(format!(
                "its tensor data needs {} bytes, the file has {}",
                data_start.saturating_add(data_end),
                self.len
            )));
        }
        Ok(GgufInfo {
            version,
            tensors,
            file_bytes: self.len,
            meta,
            arrays: std::mem::take(&mut self.arrays),
            tensor_table,
        })
    }

    /// One metadata value of type `value_type`: kept scalars and short strings,
    /// `None` for what is skipped (arrays, long strings).
    fn value(
        &mut self,
        value_type: u32,
        key: &str,
        depth: u32,
    ) -> Result<Option<MetaValue>, GgufError> {
        let what = "a metadata value";
        Ok(Some(match value_type {
            0 => MetaValue::Int(i128::from(self.bytes::<1>(what)?[0])),
            1 => MetaValue::Int(i128::from(i8::from_le_bytes(self.bytes::<1>(what)?))),
            2 => MetaValue::Int(i128::from(u16::from_le_bytes(self.bytes::<2>(what)?))),
            3 => MetaValue::Int(i128::from(i16::from_le_bytes(self.bytes::<2>(what)?))),
            4 => MetaValue::Int(i128::from(self.u32(what)?)),
            5 => MetaValue::Int(i128::from(i32::from_le_bytes(self.bytes::<4>(what)?))),
            6 => MetaValue::Float(f64::from(f32::from_le_bytes(self.bytes::<4>(what)?))),
            7 => MetaValue::Int(i128::from(self.bytes::<1>(what)?[0] != 0)),
            8 => match self.string(what, MAX_KEPT_STRING)? {
                Some(s) => MetaValue::Str(s),
                None => return Ok(None),
            },
            9 => {
                if depth > 0 {
                    return Err(GgufError::Corrupt(format!("{}: nested arrays", shown(key))));
                }
                let element_type = self.u32(what)?;
                let count = self.u64(what)?;
                match fixed_size(element_type) {
                    Some(size) => {
                        let bytes = count.checked_mul(size).ok_or_else(|| {
                            GgufError::Corrupt(format!("{}: array size overflows", shown(key)))
                        })?;
                        self.skip(bytes, what)?;
                    }
                    None if element_type == 8 => {
                        if count > self.left() / 8 {
                            return Err(GgufError::Truncated(format!(
                                "{}: {count} strings cannot fit in what is left of the file",
                                shown(key)
                            )));
                        }
                        for _ in 0..count {
                            let len = self.u64(what)?;
                            self.skip(len, what)?;
                        }
                    }
                    None => {
                        return Err(GgufError::Corrupt(format!(
                            "{}: unknown array element type {element_type}",
                            shown(key)
                        )));
                    }
                }
                self.arrays.insert(key.to_string(), (element_type, count));
                return Ok(None);
            }
            10 => MetaValue::Int(i128::from(self.u64(what)?)),
            11 => MetaValue::Int(i128::from(i64::from_le_bytes(self.bytes::<8>(what)?))),
            12 => MetaValue::Float(f64::from_le_bytes(self.bytes::<8>(what)?)),
            other => {
                return Err(GgufError::Corrupt(format!(
                    "{}: unknown value type {other}",
                    shown(key)
                )));
            }
        }))
    }
}

/// Bytes of one element of a fixed-size GGUF value type.
fn fixed_size(value_type: u32) -> Option<u64> {
    match value_type {
        0 | 1 | 7 => Some(1),
        2 | 3 => Some(2),
        4..=6 => Some(4),
        10..=12 => Some(8),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
