//! Tests of [`super`]: kept apart so the module reads as its one concern.
use super::*;

/// A GGUF file in memory: metadata entries, then one-dimensional tensors of
/// `(type, elements)`.
pub(crate) fn build(meta: &[(&str, MetaValue)], tensors: &[(u32, u64)]) -> Vec<u8> {
    let names: Vec<String> = (0..tensors.len()).map(|i| format!("t{i}")).collect();
    let shaped: Vec<(&str, u32, Vec<u64>)> = tensors
        .iter()
        .zip(&names)
        .map(|((ty, elements), name)| (name.as_str(), *ty, vec![*elements]))
        .collect();
    build_shaped(meta, &shaped)
}

/// A GGUF file in memory: metadata entries, a token table of two tokens, then
/// tensors of `(name, type, dims)`.
pub(crate) fn build_shaped(
    meta: &[(&str, MetaValue)],
    tensors: &[(&str, u32, Vec<u64>)],
) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&3u32.to_le_bytes());
    out.extend_from_slice(&(tensors.len() as u64).to_le_bytes());
    out.extend_from_slice(&(meta.len() as u64 + 1).to_le_bytes());
    let string = |out: &mut Vec<u8>, s: &str| {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    };
    for (key, value) in meta {
        string(&mut out, key);
        match value {
            MetaValue::Int(n) => {
                out.extend_from_slice(&4u32.to_le_bytes());
                out.extend_from_slice(&(*n as u32).to_le_bytes());
            }
            MetaValue::Float(f) => {
                out.extend_from_slice(&6u32.to_le_bytes());
                out.extend_from_slice(&(*f as f32).to_le_bytes());
            }
            MetaValue::Str(s) => {
                out.extend_from_slice(&8u32.to_le_bytes());
                string(&mut out, s);
            }
        }
    }
    // An array of strings, as the tokenizer's vocabulary is stored.
    string(&mut out, "tokenizer.ggml.tokens");
    out.extend_from_slice(&9u32.to_le_bytes());
    out.extend_from_slice(&8u32.to_le_bytes());
    out.extend_from_slice(&2u64.to_le_bytes());
    string(&mut out, "a");
    string(&mut out, "b");
    let mut offset = 0u64;
    let mut sizes = Vec::new();
    for (name, ty, dims) in tensors {
        string(&mut out, name);
        out.extend_from_slice(&(dims.len() as u32).to_le_bytes());
        for d in dims {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.extend_from_slice(&ty.to_le_bytes());
        out.extend_from_slice(&offset.to_le_bytes());
        let elements: u64 = dims.iter().product();
        let (bb, be) = type_layout(*ty).unwrap_or((1, 1));
        let size = elements / be * bb;
        sizes.push(size);
        offset += size.div_ceil(32) * 32;
    }
    while out.len() % 32 != 0 {
        out.push(0);
    }
    for size in sizes {
        out.extend(std::iter::repeat_n(7u8, size.div_ceil(32) as usize * 32));
    }
    out
}

fn write(bytes: &[u8]) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut file, bytes).unwrap();
    file
}

fn sample() -> Vec<u8> {
    build(
        &[
            ("general.architecture", MetaValue::Str("llama".into())),
            ("llama.context_length", MetaValue::Int(8192)),
            ("llama.block_count", MetaValue::Int(30)),
            ("llama.embedding_length", MetaValue::Int(576)),
            ("llama.attention.head_count", MetaValue::Int(9)),
            ("llama.attention.head_count_kv", MetaValue::Int(3)),
            ("tokenizer.chat_template", MetaValue::Str("{{x}}".into())),
        ],
        &[(0, 64), (3, 256), (12, 512)],
    )
}

#[test]
fn reads_what_the_engine_needs() {
    let file = write(&sample());
    let info = read(file.path()).unwrap();
    assert_eq!(info.version, 3);
    assert_eq!(info.tensors, 3);
    assert_eq!(info.architecture(), Some("llama"));
    assert_eq!(info.trained_context(), Some(8192));
    assert_eq!(info.chat_template(), Some("{{x}}"));
    // 30 layers x 3 kv heads x (64 + 64) x 2 bytes.
    assert_eq!(info.kv_bytes_per_token(), Some(30 * 3 * 128 * 2));
}

#[test]
fn memory_is_read_and_counted() {
    let text = "MemTotal:       24000000 kB\nMemAvailable:    1000 kB\n";
    assert_eq!(parse_meminfo(text), Some(1_024_000));
    assert_eq!(parse_meminfo("MemTotal: 1 kB"), None);
    let file = write(&sample());
    let info = read(file.path()).unwrap();
    // Weights, 4096 tokens of cache, working memory.
    assert_eq!(
        memory_needed(&info, 4096),
        info.file_bytes + 30 * 3 * 128 * 2 * 4096 + WORKING_MEMORY
    );
}

#[test]
fn every_cut_is_an_error_never_a_panic() {
    let bytes = sample();
    for cut in 0..bytes.len() {
        let file = write(&bytes[..cut]);
        let result = read(file.path());
        assert!(result.is_err(), "a file cut at {cut} bytes was accepted");
    }
}

#[test]
fn garbage_is_not_gguf_and_flipped_bytes_never_panic() {
    let file = write(b"<html>not a model</html>");
    assert_eq!(read(file.path()).unwrap_err(), GgufError::NotGguf);
    let bytes = sample();
    for i in 4..bytes.len().min(600) {
        for flip in [0xffu8, 0x80, 0x01] {
            let mut copy = bytes.clone();
            copy[i] ^= flip;
            let file = write(&copy);
            let _ = read(file.path());
        }
    }
}

#[test]
fn huge_counts_are_an_error_not_a_long_loop() {
    let mut bytes = sample();
    bytes[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
    let file = write(&bytes);
    assert!(matches!(read(file.path()), Err(GgufError::Truncated(_))));
    let mut bytes = sample();
    bytes[4..8].copy_from_slice(&1u32.to_le_bytes());
    let file = write(&bytes);
    assert_eq!(read(file.path()).unwrap_err(), GgufError::Version(1));
}

/// A small file llama.cpp could run: a llama model with a gpt2 tokenizer of two
/// tokens, an F32 norm and Q4_K weights; `change` edits it first.
fn runnable(
    change: impl FnOnce(&mut Vec<(&str, MetaValue)>, &mut Vec<(&str, u32, Vec<u64>)>),
) -> GgufInfo {
    let mut meta = vec![
        ("general.architecture", MetaValue::Str("llama".into())),
        ("llama.context_length", MetaValue::Int(2048)),
        ("tokenizer.ggml.model", MetaValue::Str("gpt2".into())),
    ];
    let mut tensors = vec![
        ("token_embd.weight", 12u32, vec![256, 2]),
        ("blk.0.attn_norm.weight", 0, vec![256]),
        ("blk.0.attn_q.weight", 12, vec![256, 256]),
    ];
    change(&mut meta, &mut tensors);
    let file = write(&build_shaped(&meta, &tensors));
    read(file.path()).unwrap()
}

fn refusal(info: &GgufInfo) -> String {
    match check_runnable(info) {
        Err(GgufError::Unsupported(reason)) => reason,
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn a_file_llama_cpp_can_run_passes() {
    let info = runnable(|_, _| {});
    assert_eq!(info.arrays.get("tokenizer.ggml.tokens"), Some(&(8, 2)));
    assert_eq!(info.tensor_table[0].dims, [256, 2]);
    check_runnable(&info).unwrap();
}

#[test]
fn a_tokenizer_llama_cpp_would_abort_on_is_refused() {
    // R4 finding 2: "none" passed the header check and aborted inside llama.cpp.
    for model in ["none", "no_vocab", "test", "sentencepiece", "gpt2\u{1b}[2J"] {
        let info = runnable(|meta, _| meta[2].1 = MetaValue::Str(model.into()));
        let reason = refusal(&info);
        assert!(reason.contains("tokenizer.ggml.model"), "{reason}");
        assert!(!reason.contains('\u{1b}'), "{reason}");
    }
    let info = runnable(|meta, _| {
        meta.remove(2);
    });
    assert!(refusal(&info).contains("no tokenizer"));
}

#[test]
fn weights_the_cpu_cannot_multiply_are_refused() {
    // R4 finding 2: a Q8_1 tensor loaded and aborted at the first answer.
    for ty in [9u32, 15, 24, 26, 28, 31, 99] {
        let info = runnable(|_, tensors| tensors[2].1 = ty);
        let reason = refusal(&info);
        assert!(reason.contains("blk.0.attn_q.weight"), "{reason}");
    }
    let info = runnable(|_, tensors| tensors[2].1 = 9);
    assert!(refusal(&info).contains("type Q8_1"), "{}", refusal(&info));
    // A norm must be F32: llama.cpp multiplies it only as F32.
    let info = runnable(|_, tensors| tensors[1].1 = 8);
    assert!(
        refusal(&info).contains("is Q8_0, not F32"),
        "{}",
        refusal(&info)
    );
    // Every type the CPU backend multiplies passes as a weight.
    for ty in [0u32, 1, 2, 3, 6, 7, 8, 10, 11, 12, 13, 14, 30] {
        let info = runnable(|_, tensors| tensors[2].1 = ty);
        check_runnable(&info).unwrap_or_else(|e| panic!("type {ty}: {e}"));
    }
}

#[test]
fn an_embedding_longer_than_the_token_table_is_refused() {
    let info = runnable(|_, tensors| tensors[0].2 = vec![256, 3]);
    assert!(refusal(&info).contains("3 rows but its token table has 2"));
}

#[test]
fn an_architecture_that_is_not_a_name_is_refused_and_shown_safely() {
    let info =
        runnable(|meta, _| meta[0].1 = MetaValue::Str("llama\u{1b}]0;owned\u{7}\u{202e}".into()));
    let reason = refusal(&info);
    assert!(
        !reason.chars().any(|c| c.is_control() || c == '\u{202e}'),
        "{reason:?}"
    );
}

#[test]
fn a_long_key_is_quoted_short() {
    // R4 finding 8: a 60 KB key came back whole in the error line.
    let key = "k".repeat(60_000);
    let mut bytes = build(&[(key.as_str(), MetaValue::Int(1))], &[]);
    // The key's value type (4, u32) becomes an unknown type.
    let at = 24 + 8 + key.len();
    bytes[at..at + 4].copy_from_slice(&77u32.to_le_bytes());
    let file = write(&bytes);
    let message = read(file.path()).unwrap_err().to_string();
    assert!(message.contains("unknown value type 77"), "{message}");
    assert!(message.len() < 300, "{} bytes", message.len());
}

#[test]
fn a_norm_epsilon_llama_cpp_would_assert_on_is_refused() {
    // R5 finding 10: a NaN layer_norm_rms_epsilon passed, and ggml's
    // `GGML_ASSERT(eps >= 0.0f)` ended the whole server at the first answer.
    for key in [
        "llama.attention.layer_norm_rms_epsilon",
        "llama.attention.layer_norm_epsilon",
    ] {
        for (value, shown) in [
            (f64::NAN, "NaN"),
            (-1e-5, "-0.00001"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
        ] {
            let info = runnable(|meta, _| meta.push((key, MetaValue::Float(value))));
            let reason = refusal(&info);
            assert!(
                reason.contains(&format!("its {key} is {shown}")),
                "{reason}"
            );
            assert!(reason.contains("finite number, 0 or more"), "{reason}");
            assert!(reason.contains("convert the model again"), "{reason}");
        }
        // Zero is what ggml accepts, and a good file's tiny value passes.
        for value in [0.0, 1e-6, 1e-5] {
            let info = runnable(|meta, _| meta.push((key, MetaValue::Float(value))));
            check_runnable(&info).unwrap_or_else(|e| panic!("{key} = {value}: {e}"));
        }
    }
    // Another architecture's key is not this model's: only the file's own prefix counts.
    let info = runnable(|meta, _| {
        meta.push((
            "qwen3.attention.layer_norm_rms_epsilon",
            MetaValue::Float(f64::NAN),
        ))
    });
    check_runnable(&info).unwrap();
    let info = runnable(|meta, _| {
        meta[0].1 = MetaValue::Str("qwen3".into());
        meta.push((
            "qwen3.attention.layer_norm_rms_epsilon",
            MetaValue::Float(f64::NAN),
        ))
    });
    assert!(refusal(&info).contains("qwen3.attention.layer_norm_rms_epsilon is NaN"));
}

#[test]
fn a_rope_base_or_scale_that_is_not_a_finite_positive_number_is_refused() {
    for key in ["llama.rope.freq_base", "llama.rope.freq_base_swa"] {
        for value in [f64::NAN, 0.0, -10000.0, f64::INFINITY] {
            let info = runnable(|meta, _| meta.push((key, MetaValue::Float(value))));
            let reason = refusal(&info);
            assert!(reason.contains(key), "{reason}");
            assert!(reason.contains("finite number above 0"), "{reason}");
        }
        let info = runnable(|meta, _| meta.push((key, MetaValue::Float(10000.0))));
        check_runnable(&info).unwrap();
    }
    for key in ["llama.rope.scaling.factor", "llama.rope.scale_linear"] {
        for value in [f64::NAN, -2.0, f64::INFINITY] {
            let info = runnable(|meta, _| meta.push((key, MetaValue::Float(value))));
            let reason = refusal(&info);
            assert!(reason.contains(key), "{reason}");
        }
        // 0 is llama.cpp's "no scaling"; 4 is an ordinary factor.
        for value in [0.0, 4.0] {
            let info = runnable(|meta, _| meta.push((key, MetaValue::Float(value))));
            check_runnable(&info).unwrap_or_else(|e| panic!("{key} = {value}: {e}"));
        }
    }
}

#[test]
fn a_rope_scaling_type_llama_cpp_does_not_know_is_refused() {
    for kind in ["none", "linear", "yarn", "longrope"] {
        let info =
            runnable(|meta, _| meta.push(("llama.rope.scaling.type", MetaValue::Str(kind.into()))));
        check_runnable(&info).unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
    let info = runnable(|meta, _| {
        meta.push((
            "llama.rope.scaling.type",
            MetaValue::Str("dynamic\u{1b}[2J".into()),
        ))
    });
    let reason = refusal(&info);
    assert!(reason.contains("llama.rope.scaling.type"), "{reason}");
    assert!(!reason.contains('\u{1b}'), "{reason}");
}
