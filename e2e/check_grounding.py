#!/usr/bin/env python3
"""Checks the Gemini-compatible part of a `ground answer --json` reply against Gemini's rules.

  ground answer "..." --json | python3 e2e/check_grounding.py

(The team's checker from shared/tools/check-grounding.py, kept in the repository so that
the end-to-end test never depends on a folder beside the checkout.)

Rules (Gemini REST `groundingMetadata`):
- groundingChunks[i].web has a non-empty `uri` (and `title`).
- every groundingSupports[j].segment: startIndex (absent means 0) and endIndex are UTF-8
  *byte* offsets into the top-level `answer`, start inclusive, end exclusive, on character
  boundaries, and answer_bytes[start:end] decodes to exactly segment.text.
- groundingChunkIndices and confidenceScores have the same length; every index points at
  an existing chunk; every score is in [0, 1].
- webSearchQueries is a list of strings.
Prints one line per violation and a last line "N passed, N failed"; exit 1 on any failure.
"""
import json
import sys


def main():
    doc = json.load(sys.stdin)
    answer = doc.get("answer")
    gm = doc.get("groundingMetadata")
    ok, bad = 0, []

    def check(cond, msg):
        nonlocal ok
        if cond:
            ok += 1
        else:
            bad.append(msg)

    check(isinstance(answer, str), "top-level `answer` is not a string")
    check(isinstance(gm, dict), "no `groundingMetadata` object")
    if not isinstance(answer, str) or not isinstance(gm, dict):
        return report(ok, bad)
    raw = answer.encode("utf-8")
    q = gm.get("webSearchQueries", [])
    check(isinstance(q, list) and all(isinstance(x, str) for x in q), "webSearchQueries is not a list of strings")
    chunks = gm.get("groundingChunks", [])
    check(isinstance(chunks, list), "groundingChunks is not a list")
    for i, c in enumerate(chunks if isinstance(chunks, list) else []):
        web = c.get("web") if isinstance(c, dict) else None
        check(isinstance(web, dict) and isinstance(web.get("uri"), str) and web["uri"],
              f"groundingChunks[{i}].web.uri missing or empty")
    for j, s in enumerate(gm.get("groundingSupports", []) or []):
        seg = s.get("segment", {}) if isinstance(s, dict) else {}
        st, en, txt = seg.get("startIndex", 0), seg.get("endIndex"), seg.get("text")
        if not (isinstance(st, int) and isinstance(en, int) and 0 <= st <= en <= len(raw)):
            check(False, f"groundingSupports[{j}]: indices {st}..{en} outside 0..{len(raw)} bytes")
            continue
        try:
            piece = raw[st:en].decode("utf-8")
        except UnicodeDecodeError:
            check(False, f"groundingSupports[{j}]: {st}..{en} splits a UTF-8 character")
            continue
        check(piece == txt, f"groundingSupports[{j}]: bytes {st}..{en} are {piece!r}, segment.text is {txt!r}")
        idx = s.get("groundingChunkIndices", [])
        sc = s.get("confidenceScores", [])
        check(isinstance(idx, list) and isinstance(sc, list) and len(idx) == len(sc),
              f"groundingSupports[{j}]: {len(idx)} chunk indices but {len(sc)} confidence scores")
        check(all(isinstance(k, int) and 0 <= k < len(chunks) for k in idx),
              f"groundingSupports[{j}]: chunk index out of range in {idx}")
        check(all(isinstance(x, (int, float)) and 0 <= x <= 1 for x in sc),
              f"groundingSupports[{j}]: confidence score outside [0, 1] in {sc}")
    return report(ok, bad)


def report(ok, bad):
    for b in bad:
        print(b)
    print(f"{ok} passed, {len(bad)} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
