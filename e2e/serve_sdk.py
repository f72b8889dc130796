#!/usr/bin/env python3
"""`ground serve` under the real client SDKs (.ci/e2e), one line per check.

    VENV/bin/python e2e/serve_sdk.py BASE KEY SITE_BASE QUESTION

BASE is the server's root (http://127.0.0.1:PORT), KEY its API key, SITE_BASE the
loopback site whose pages the answers must cite. Each check prints `ok: WHAT` or
`FAIL: WHAT (why)`, and `info:` lines say what was seen; .ci/e2e counts the ok/FAIL
lines. Exit status 0 whatever the checks say, 2 on misuse.

The SDKs (pinned by .ci/e2e) and what is asked of them:
  openai        chat.completions.create(model="ground"), whole and streamed with
                include_usage; an unknown model and a wrong key raise the SDK's errors
  google-genai  models.generate_content / generate_content_stream with the
                google_search tool (groundingMetadata, UTF-8 byte offsets), and without it
  google-adk    the google_search agent of ADK's docs, run by InMemoryRunner

Attribute names are the SDKs' own (read in their sources): openai keeps fields it does not
declare (top-level `citations`, `search_results`, `ground`, and a stream delta's
`annotations`) in `model_extra`; google-genai drops unknown fields and names everything
in snake_case (grounding_metadata.grounding_chunks[].web.uri, grounding_supports[].segment
.start_index/.end_index/.text).
"""
import asyncio
import os
import re
import sys
import time
import traceback

SITE_PAGES = {"varnholm.html", "tardigrades.html", "sourdough.html", "honeybees.html", "lighthouses.html"}
TIMEOUT_S = 330  # one answer on the real llama.cpp server; as .ci/e2e's `ground answer`
GEMINI_MODEL = "gemini-2.5-flash"


def check(cond, what, why=""):
    if cond:
        print(f"ok: {what}", flush=True)
    else:
        print(f"FAIL: {what}" + (f" ({why})" if why else ""), flush=True)
    return bool(cond)


def info(text):
    print(f"info: {text}"[:500], flush=True)


def site_page(site_base, url):
    """The page name if url is one of the loopback site's pages, else None."""
    prefix = site_base.rstrip("/") + "/"
    if isinstance(url, str) and url.startswith(prefix) and url[len(prefix):] in SITE_PAGES:
        return url[len(prefix):]
    return None


def failed(what, exc):
    """An exception where a reply was expected: the check's failure, with the cause."""
    check(False, what, f"{type(exc).__name__}: {exc}"[:400])
    tb = [t for t in traceback.format_exc().strip().splitlines() if t.strip().strip("^~")]
    for line in tb[-4:]:
        info("  " + line.strip())


def timed(label, fn):
    t = time.monotonic()
    try:
        return fn()
    finally:
        info(f"{label}: {time.monotonic() - t:.1f}s")


# ---------------------------------------------------------------------------
# openai


def check_url_citations(content, annotations, site, label):
    """annotations: dicts {type, url_citation{url, title, start_index, end_index}}."""
    if not check(isinstance(annotations, list) and annotations, f"{label}: annotations[] is non-empty",
                 repr(annotations)[:200]):
        return
    bad_type, bad_span, bad_url = [], [], []
    for a in annotations:
        cite = a.get("url_citation") if isinstance(a, dict) else None
        if a.get("type") != "url_citation" or not isinstance(cite, dict):
            bad_type.append(a)
            continue
        s, e = cite.get("start_index"), cite.get("end_index")
        if not (isinstance(s, int) and isinstance(e, int) and 0 <= s < e <= len(content)) or not content[s:e].strip():
            bad_span.append((s, e))
        if not site_page(site, cite.get("url")):
            bad_url.append(cite.get("url"))
    check(not bad_type, f"{label}: every annotation is a url_citation", repr(bad_type)[:200])
    check(not bad_span, f"{label}: every content[start_index:end_index] is a non-empty piece of the content "
          f"({len(annotations)} annotations, {len(content)} chars)", repr(bad_span)[:200])
    check(not bad_url, f"{label}: every url_citation.url is a loopback site page", repr(bad_url)[:200])


def annotation_dicts(items):
    """SDK models or plain dicts (a delta's annotations stay dicts in model_extra)."""
    out = []
    for a in items or []:
        out.append(a.model_dump() if hasattr(a, "model_dump") else a)
    return out


def openai_checks(base, key, site, question):
    import openai

    info(f"openai {openai.__version__}")
    # No retries: a retried request would hide what the server answered first.
    client = openai.OpenAI(base_url=base + "/v1", api_key=key, max_retries=0, timeout=TIMEOUT_S)

    # (a) the whole reply
    try:
        models = client.models.list()
        ids = [m.id for m in models.data]
        check("ground" in ids, "openai: models.list() lists `ground`", repr(ids))
    except Exception as e:  # noqa: BLE001 - any failure is the check's failure
        failed("openai: models.list()", e)
    try:
        r = timed("openai chat.completions.create", lambda: client.chat.completions.create(
            model="ground", messages=[{"role": "user", "content": question}]))
    except Exception as e:  # noqa: BLE001
        failed("openai: chat.completions.create(model=\"ground\") answers", e)
    else:
        check(r.object == "chat.completion" and len(r.choices) == 1, "openai: a chat.completion with one choice",
              f"{r.object}, {len(r.choices)} choices")
        msg = r.choices[0].message
        content = msg.content or ""
        check(content.strip() != "", "openai: message.content is non-empty", repr(content)[:100])
        info(f"content: {content!r}")
        check(r.choices[0].finish_reason == "stop", "openai: finish_reason is stop", repr(r.choices[0].finish_reason))
        check_url_citations(content, annotation_dicts(msg.annotations), site, "openai")
        extra = r.model_extra or {}
        cites = extra.get("citations")
        check(isinstance(cites, list) and cites and all(isinstance(u, str) and u.startswith("http") for u in cites),
              "openai: model_extra[\"citations\"] is a list of URLs", repr(cites)[:200])
        marks = sorted({int(n) for n in re.findall(r"\[(\d+)\]", content)})
        check(marks and isinstance(cites, list) and all(1 <= n <= len(cites) for n in marks),
              "openai: the content's [n] markers index model_extra[\"citations\"]",
              f"markers {marks}, {len(cites) if isinstance(cites, list) else None} citations")
        results = extra.get("search_results")
        check(isinstance(results, list) and results and all(isinstance(x, dict) and x.get("url") for x in results),
              "openai: model_extra[\"search_results\"] lists results with a url", repr(results)[:200])
        u = r.usage
        check(u is not None and u.total_tokens == u.prompt_tokens + u.completion_tokens and u.total_tokens > 0,
              "openai: usage has prompt/completion/total tokens", repr(u))
        g = extra.get("ground")
        check(isinstance(g, dict) and "answer" in g and "sources" in g,
              "openai: model_extra[\"ground\"] is ground's --json object", repr(g)[:200])
        check("images" not in extra and "related_questions" not in extra,
              "openai: no images or related_questions unless asked", repr(sorted(extra))[:200])

    # (a2) Perplexity's return_images / return_related_questions, sent as the SDK sends
    # any extra field (extra_body); the images are links, never fetched by ground.
    try:
        r = timed("openai chat.completions.create (images)", lambda: client.chat.completions.create(
            model="ground", messages=[{"role": "user", "content": question}],
            extra_body={"return_images": True, "return_related_questions": True}))
    except Exception as e:  # noqa: BLE001
        failed("openai: return_images / return_related_questions are accepted", e)
    else:
        extra = r.model_extra or {}
        images = extra.get("images")
        check(isinstance(images, list) and all(
            isinstance(i, dict) and set(i) == {"image_url", "origin_url", "height", "width"}
            and str(i["image_url"]).startswith("http") for i in images),
              "openai: model_extra[\"images\"] is Perplexity's list of {image_url, origin_url, height, width}",
              repr(images)[:200])
        related = extra.get("related_questions")
        check(isinstance(related, list) and all(isinstance(q, str) for q in related),
              "openai: model_extra[\"related_questions\"] is a list of strings", repr(related)[:200])

    # (b) streamed, with include_usage
    try:
        t = time.monotonic()
        stream = client.chat.completions.create(
            model="ground", messages=[{"role": "user", "content": question}], stream=True,
            stream_options={"include_usage": True})
        chunks = list(stream)
        info(f"openai streamed: {time.monotonic() - t:.1f}s, {len(chunks)} chunks")
    except Exception as e:  # noqa: BLE001
        failed("openai: a streamed chat.completions.create answers", e)
    else:
        parts, annotations, finish, usage_chunks, objects = [], [], None, [], set()
        on_finish = False  # the annotations came on the chunk with the finish_reason
        for c in chunks:
            objects.add(c.object)
            if c.usage is not None and not c.choices:
                usage_chunks.append(c)
            for ch in c.choices:
                if ch.delta.content:
                    parts.append(ch.delta.content)
                # ChoiceDelta declares no `annotations`: the SDK keeps them in model_extra
                extra = ch.delta.model_extra or {}
                got = annotation_dicts(extra.get("annotations") or getattr(ch.delta, "annotations", None))
                annotations += got
                if ch.finish_reason:
                    finish = ch.finish_reason
                    on_finish = on_finish or bool(got)
        content = "".join(parts)
        check(objects == {"chat.completion.chunk"}, "openai stream: every chunk is a chat.completion.chunk", repr(objects))
        check(content.strip() != "", "openai stream: the chunks' content joined is non-empty", repr(content)[:100])
        check(finish == "stop", "openai stream: a chunk carries finish_reason stop", repr(finish))
        check_url_citations(content, annotations, site, "openai stream")
        check(on_finish, "openai stream: the delta.annotations come on the chunk with the finish_reason")
        last_usage = usage_chunks[-1].usage if usage_chunks else None
        check(len(usage_chunks) == 1 and chunks[-1] is usage_chunks[0] and last_usage.total_tokens > 0,
              "openai stream: the last chunk has choices [] and usage (include_usage)",
              f"{len(usage_chunks)} usage chunks; last chunk {chunks[-1].model_dump_json()[:200] if chunks else None}")

    # (c) errors, as the SDK raises them
    try:
        client.chat.completions.create(model="no-such-model", messages=[{"role": "user", "content": question}])
    except openai.BadRequestError as e:
        body = e.body if isinstance(e.body, dict) else {}
        check(e.status_code == 400 and body.get("message"),
              "openai: an unknown model raises BadRequestError, status 400, with error.message", repr(body)[:200])
    except Exception as e:  # noqa: BLE001
        failed("openai: an unknown model raises BadRequestError", e)
    else:
        check(False, "openai: an unknown model raises BadRequestError", "it answered")
    bad = openai.OpenAI(base_url=base + "/v1", api_key=key + "-wrong", max_retries=0, timeout=60)
    try:
        bad.chat.completions.create(model="ground", messages=[{"role": "user", "content": question}])
    except openai.AuthenticationError as e:
        check(e.status_code == 401, "openai: a wrong key raises AuthenticationError, status 401", repr(e.status_code))
    except Exception as e:  # noqa: BLE001
        failed("openai: a wrong key raises AuthenticationError", e)
    else:
        check(False, "openai: a wrong key raises AuthenticationError", "it answered")


# ---------------------------------------------------------------------------
# google-genai


def check_grounding(text, gm, site, label):
    """gm: the SDK's GroundingMetadata; offsets are UTF-8 byte offsets into text."""
    if not check(gm is not None, f"{label}: candidates[0].grounding_metadata is there"):
        return
    chunks = gm.grounding_chunks or []
    uris = [c.web.uri if c.web else None for c in chunks]
    info(f"{label}: grounding_chunks uris {uris}; web_search_queries {gm.web_search_queries}")
    check(any(site_page(site, u) for u in uris), f"{label}: a grounding_chunks[].web.uri is a loopback site page",
          repr(uris)[:300])
    sep = gm.search_entry_point
    check(sep is not None and bool(sep.rendered_content), f"{label}: search_entry_point.rendered_content is set")
    supports = gm.grounding_supports or []
    check(supports, f"{label}: grounding_supports[] is non-empty")
    raw = text.encode("utf-8")
    bad = []
    for s in supports:
        seg = s.segment
        # the Gemini API leaves a zero startIndex out; the SDK then reads None
        start = (seg.start_index or 0) if seg else None
        end = seg.end_index if seg else None
        ok = (seg is not None and isinstance(end, int) and 0 <= start < end <= len(raw)
              and raw[start:end].decode("utf-8", "replace") == seg.text)
        idx = s.grounding_chunk_indices or []
        ok = ok and idx and all(0 <= i < len(chunks) for i in idx)
        if not ok:
            bad.append((start, end, seg.text if seg else None, idx))
    check(supports and not bad, f"{label}: every support's segment bytes [start_index:end_index] of the text "
          f"are its segment.text, and its chunk indices exist ({len(supports)} supports)", repr(bad)[:300])


def genai_checks(base, key, site, question):
    from google import genai
    from google.genai import errors, types

    info(f"google-genai {genai.__version__}")
    client = genai.Client(api_key=key, http_options=types.HttpOptions(base_url=base, timeout=TIMEOUT_S * 1000))
    search = types.GenerateContentConfig(tools=[types.Tool(google_search=types.GoogleSearch())])

    # (d) whole
    try:
        r = timed("genai generate_content", lambda: client.models.generate_content(
            model=GEMINI_MODEL, contents=question, config=search))
    except Exception as e:  # noqa: BLE001
        failed(f"genai: models.generate_content({GEMINI_MODEL}, google_search) answers", e)
    else:
        text = r.text or ""
        check(text.strip() != "", "genai: response.text is non-empty", repr(text)[:100])
        info(f"text: {text!r}")
        cand = r.candidates[0] if r.candidates else None
        check(cand is not None and cand.finish_reason == types.FinishReason.STOP,
              "genai: candidates[0].finish_reason is STOP", repr(cand and cand.finish_reason))
        check_grounding(text, cand.grounding_metadata if cand else None, site, "genai")
        um = r.usage_metadata
        check(um is not None and (um.total_token_count or 0) > 0, "genai: usage_metadata has a total_token_count",
              repr(um)[:200])
        check(bool(r.model_version) and bool(r.response_id), "genai: model_version and response_id are set",
              f"{r.model_version!r} {r.response_id!r}")

    # (e) streamed
    try:
        t = time.monotonic()
        chunks = list(client.models.generate_content_stream(model=GEMINI_MODEL, contents=question, config=search))
        info(f"genai streamed: {time.monotonic() - t:.1f}s, {len(chunks)} chunks")
    except Exception as e:  # noqa: BLE001
        failed(f"genai: models.generate_content_stream({GEMINI_MODEL}, google_search) answers", e)
    else:
        text = "".join(c.text or "" for c in chunks)
        check(text.strip() != "", "genai stream: the chunks' text joined is non-empty", repr(text)[:100])
        last = chunks[-1].candidates[0] if chunks and chunks[-1].candidates else None
        check(last is not None and last.finish_reason == types.FinishReason.STOP,
              "genai stream: the last chunk's finish_reason is STOP", repr(last and last.finish_reason))
        check_grounding(text, last.grounding_metadata if last else None, site, "genai stream")

    # without a search tool: a plain model answer, no grounding
    try:
        r = timed("genai generate_content (no tool)", lambda: client.models.generate_content(
            model=GEMINI_MODEL, contents="Say hello in one short sentence."))
    except Exception as e:  # noqa: BLE001
        failed("genai: generate_content without a search tool answers", e)
    else:
        cand = r.candidates[0] if r.candidates else None
        check((r.text or "").strip() != "" and cand is not None and cand.grounding_metadata is None,
              "genai: without a search tool, a plain answer with no grounding_metadata",
              f"text={r.text!r} grounding={cand and cand.grounding_metadata!r}"[:300])

    # a wrong key: the SDK raises ClientError with the code
    bad = genai.Client(api_key=key + "-wrong", http_options=types.HttpOptions(base_url=base, timeout=60_000))
    try:
        bad.models.generate_content(model=GEMINI_MODEL, contents=question, config=search)
    except errors.ClientError as e:
        check(e.code == 401, "genai: a wrong key raises ClientError with code 401", f"code {e.code} status {e.status}")
    except Exception as e:  # noqa: BLE001
        failed("genai: a wrong key raises ClientError", e)
    else:
        check(False, "genai: a wrong key raises ClientError", "it answered")


# ---------------------------------------------------------------------------
# google-adk


async def adk_run(question):
    from google.adk.agents import Agent
    from google.adk.runners import InMemoryRunner
    from google.adk.tools import google_search
    from google.genai import types

    # ADK's google_search agent, as its docs give it
    root_agent = Agent(
        name="google_search_agent",
        model="gemini-2.5-flash",
        instruction="Answer questions using Google Search when needed. Always cite sources.",
        description="Professional search assistant with Google Search capabilities",
        tools=[google_search],
    )
    runner = InMemoryRunner(agent=root_agent, app_name="ground_e2e")
    try:
        session = await runner.session_service.create_session(app_name="ground_e2e", user_id="e2e")
        message = types.Content(role="user", parts=[types.Part(text=question)])
        events = []
        async for event in runner.run_async(user_id="e2e", session_id=session.id, new_message=message):
            events.append(event)
        return events
    finally:
        await runner.close()


def adk_checks(base, key, site, question):
    # How ADK's users point it at a server: the environment, read by google-genai.
    os.environ["GOOGLE_GEMINI_BASE_URL"] = base
    os.environ["GOOGLE_API_KEY"] = key
    os.environ["GOOGLE_GENAI_USE_VERTEXAI"] = "FALSE"
    os.environ.pop("GEMINI_API_KEY", None)  # it would win over GOOGLE_API_KEY
    try:
        import google.adk

        info(f"google-adk {google.adk.__version__}")
        t = time.monotonic()
        events = asyncio.run(asyncio.wait_for(adk_run(question), TIMEOUT_S))
        info(f"adk run: {time.monotonic() - t:.1f}s, {len(events)} events")
    except Exception as e:  # noqa: BLE001
        failed("adk: the google_search agent runs under InMemoryRunner", e)
        return
    finals = [e for e in events if e.is_final_response()]
    if not check(finals, "adk: the run ends with a final response event", f"{len(events)} events"):
        return
    final = finals[-1]
    if final.error_code or final.error_message:
        info(f"adk final event error: {final.error_code} {final.error_message}")
    text = "".join(p.text or "" for p in (final.content.parts if final.content and final.content.parts else []))
    check(text.strip() != "", "adk: the final event has text", repr(text)[:100])
    gm = final.grounding_metadata
    uris = [c.web.uri for c in (gm.grounding_chunks or []) if c.web] if gm else []
    check(gm is not None and any(site_page(site, u) for u in uris),
          "adk: the final event's grounding_metadata names a loopback site page", repr(uris)[:300])


def main(argv):
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    base, key, site, question = argv[1].rstrip("/"), argv[2], argv[3].rstrip("/"), argv[4]
    for name, fn in (("openai", openai_checks), ("google-genai", genai_checks), ("google-adk", adk_checks)):
        try:
            fn(base, key, site, question)
        except ImportError as e:
            check(False, f"{name} is importable", repr(e))
        except Exception as e:  # noqa: BLE001 - a bug here must not hide the other SDKs' checks
            failed(f"{name} checks ran to the end", e)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
