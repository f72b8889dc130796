#!/usr/bin/env python3
"""Writes fixtures/models/tiny-chatml.gguf: the GGUF the engine tests run on any machine.

A llama-architecture model small enough to commit (under 1 MB) that llama.cpp loads and
decodes like any other: two layers, 64-wide, a byte-level BPE vocabulary of its own
(256 byte tokens, merges learned below from a fixed English text, three ChatML control
tokens) and a ChatML chat template, so loading, the template, tokenizing, grammars,
streaming, token counts, cancelling and prompt reuse all run the real code paths. Its
weights are random (fixed seed): its replies are noise, which is all those tests need.
Tests that need replies that make sense use SmolLM2 (tests/it/embedded.rs, real_model).

Two things are arranged so that greedy decoding of noise is predictable:
- every token's embedding has 1.0 in dimension 0, which no layer writes to (row 0 of
  attn_output and ffn_down is zero), so after the last norm dimension 0 is always
  positive; the output rows of the "unwanted" tokens (control tokens, bytes that are not
  printable ASCII, `"` and `\\`) are -100 there and 0 elsewhere. Greedy decoding never
  picks them unless a grammar leaves nothing else: free text runs to the token cap
  (never an early end-of-turn, never broken UTF-8), and a JSON string runs to its
  maxLength before the grammar closes it, so a grammar-constrained reply ends where
  the grammar says and a plain JSON string runs until it is stopped.
- everything is deterministic (one seeded generator, pinned gguf and numpy): running
  this again writes the same bytes (.ci/tiny-gguf checks it in CI).

Usage (the pinned versions are the ones the committed file was written with):
    python3 -m venv /tmp/tiny-gguf && /tmp/tiny-gguf/bin/pip install gguf==0.17.1 numpy==2.2.6
    /tmp/tiny-gguf/bin/python scripts/make-tiny-gguf.py [OUT]
"""

import collections
import os
import re
import sys

import numpy as np
from gguf import GGMLQuantizationType, GGUFWriter, LlamaFileType, TokenType

OUT = os.path.join(os.path.dirname(__file__), "..", "fixtures", "models", "tiny-chatml.gguf")

# Shapes: small, but every part of a llama block is there (grouped-query attention too).
N_LAYER, D, FF, N_HEAD, N_KV, CONTEXT = 2, 64, 128, 4, 2, 8192
HEAD = D // N_HEAD
N_MERGES = 160
SEED = 20261126

# The control tokens, first: ids 0, 1, 2.
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

# A ChatML template written for this file (llama.cpp recognises ChatML by its markers).
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

# The text the merges are learned from: plain English about the tests' own subjects.
CORPUS = """
Tardigrades are micro-animals, also called water bears. In 2007 tardigrades survived ten
days in open space on the FOTON-M3 mission. They can survive temperatures close to
absolute zero, and they dry out and come back to life when water returns. The quick brown
fox jumps over the lazy dog. Write a long poem about the sea: the waves, the wind, the
ships and the shore. You are a helpful assistant. Answer the question from the sources,
and cite the source of every statement. Sources say what they say; when they do not
answer the question, say that it is not answerable from them. Statements, citations,
quotes and unknowns are the parts of an answer. Be brief. Hello, how are you today?
"""


def byte_chars():
    """GPT-2's byte-level alphabet: each byte as the character its token is spelled with
    (printable Latin-1 bytes stand for themselves, the others take the characters from
    U+0100 on, in byte order). llama.cpp's BPE vocabularies are spelled this way."""
    keep = set(range(ord("!"), ord("~") + 1)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
    chars, extra = {}, 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return chars


def learn_merges(text, alphabet, count):
    """Byte-pair merges learned from `text`, most frequent pair first (ties broken by the
    pair's spelling, so the result never depends on dict order). Pairs with a `"` or a
    `\\` are never merged: those stay single-byte tokens."""
    words = collections.Counter(re.findall(r" ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+", text))
    split = {w: [alphabet[b] for b in w.encode()] for w in words}
    merges = []
    while len(merges) < count:
        pairs = collections.Counter()
        for w, n in words.items():
            parts = split[w]
            for a, b in zip(parts, parts[1:]):
                if '"' in a + b or "\\" in a + b:
                    continue
                pairs[(a, b)] += n
        if not pairs:
            break
        best = max(pairs.items(), key=lambda kv: (kv[1], tuple(-ord(c) for c in kv[0][0] + kv[0][1])))[0]
        merges.append(best)
        for w in words:
            parts, out, i = split[w], [], 0
            while i < len(parts):
                if i + 1 < len(parts) and (parts[i], parts[i + 1]) == best:
                    out.append(parts[i] + parts[i + 1])
                    i += 2
                else:
                    out.append(parts[i])
                    i += 1
            split[w] = out
    return merges


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else OUT
    rng = np.random.default_rng(SEED)
    alphabet = byte_chars()
    from_char = {c: b for b, c in alphabet.items()}
    merges = learn_merges(CORPUS, alphabet, N_MERGES)

    tokens = SPECIALS + [alphabet[b] for b in range(256)] + [a + b for a, b in merges]
    types = [TokenType.CONTROL] * len(SPECIALS) + [TokenType.NORMAL] * (len(tokens) - len(SPECIALS))
    assert len(set(tokens)) == len(tokens), "a merge repeated a token"
    vocab = len(tokens)

    def unwanted(i):
        if i < len(SPECIALS):
            return True
        raw = bytes(from_char[c] for c in tokens[i])
        return any(b < 0x20 or b > 0x7E or b in b'"\\' for b in raw)

    w = GGUFWriter(out, "llama")
    w.add_name("tiny-chatml")
    w.add_description("random weights for ground's engine tests; made by scripts/make-tiny-gguf.py")
    w.add_file_type(LlamaFileType.MOSTLY_F16)
    w.add_context_length(CONTEXT)
    w.add_embedding_length(D)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_KV)
    w.add_rope_dimension_count(HEAD)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(vocab)

    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges([f"{a} {b}" for a, b in merges])
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_pad_token_id(0)
    w.add_add_bos_token(False)
    w.add_chat_template(CHAT_TEMPLATE)

    def matrix(name, rows, cols, scale, zero_row0=False):
        m = rng.standard_normal((rows, cols)).astype(np.float32) * scale
        if zero_row0:
            m[0, :] = 0.0
        w.add_tensor(name, m.astype(np.float16), raw_dtype=GGMLQuantizationType.F16)

    def ones(name, n):
        w.add_tensor(name, np.ones(n, dtype=np.float32))

    embd = rng.standard_normal((vocab, D)).astype(np.float32)
    embd[:, 0] = 1.0
    w.add_tensor("token_embd.weight", embd.astype(np.float16), raw_dtype=GGMLQuantizationType.F16)
    ones("output_norm.weight", D)
    head = rng.standard_normal((vocab, D)).astype(np.float32) * (3.0 / np.sqrt(D))
    head[:, 0] = 0.0
    for i in range(vocab):
        if unwanted(i):
            head[i, :] = 0.0
            head[i, 0] = -100.0
    w.add_tensor("output.weight", head.astype(np.float16), raw_dtype=GGMLQuantizationType.F16)
    for layer in range(N_LAYER):
        p = f"blk.{layer}."
        ones(p + "attn_norm.weight", D)
        matrix(p + "attn_q.weight", D, D, 1 / np.sqrt(D))
        matrix(p + "attn_k.weight", N_KV * HEAD, D, 1 / np.sqrt(D))
        matrix(p + "attn_v.weight", N_KV * HEAD, D, 1 / np.sqrt(D))
        matrix(p + "attn_output.weight", D, D, 1 / np.sqrt(D), zero_row0=True)
        ones(p + "ffn_norm.weight", D)
        matrix(p + "ffn_gate.weight", FF, D, 1 / np.sqrt(D))
        matrix(p + "ffn_up.weight", FF, D, 1 / np.sqrt(D))
        matrix(p + "ffn_down.weight", D, FF, 1 / np.sqrt(FF), zero_row0=True)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"{out}: {os.path.getsize(out)} bytes, {vocab} tokens")


if __name__ == "__main__":
    main()
