#!/usr/bin/env python3
"""Assertions of the end-to-end test (.ci/e2e), one line per check.

Each check prints `ok: WHAT` or `FAIL: WHAT (why)`; .ci/e2e counts these lines.
Exit status is 0 whatever the checks say (the counting is .ci/e2e's job), 2 on misuse.
Structure is asserted, not wisdom: a 135M model cannot be expected to answer well.

  checks.py site   SITE_BASE                 the site's own search endpoint
  checks.py searx  SEARX_BASE SITE_BASE      searx lists the made-up page via our engine
  checks.py llm    LLAMA_BASE                /v1/chat/completions with a json_schema
  checks.py answer REPLY_FILE RC SITE_BASE   a `ground answer --json` reply
  checks.py search REPLY_FILE RC SITE_BASE   a `ground search --json` reply
  checks.py error  REPLY_FILE RC            a `ground answer --json` run with searx down
  checks.py wait   URL SECONDS               no check: exit 0 once URL answers 200, else 1
"""
import json
import sys
import time
import urllib.parse
import urllib.request

QUESTION_PAGE = "varnholm.html"  # the page on the made-up subject
SITE_PAGES = {"varnholm.html", "tardigrades.html", "sourdough.html", "honeybees.html", "lighthouses.html"}
STATUSES = {"SUCCESS", "ERROR", "TIMEOUT", "UNSUPPORTED", "BLOCKED", "EMPTY"}
HEADERS = {
    # what a browser sends; searx 1.1 has no limiter, SearXNG's would want these
    "Accept": "text/html,application/json;q=0.9",
    "Accept-Language": "en",
    "User-Agent": "ground-e2e/1",
}


def check(cond, what, why=""):
    if cond:
        print(f"ok: {what}")
    else:
        print(f"FAIL: {what}" + (f" ({why})" if why else ""))
    return bool(cond)


def get_json(url, body=None, timeout=60):
    data = json.dumps(body).encode() if body is not None else None
    headers = dict(HEADERS)
    if data is not None:
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, headers=headers)
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return resp.status, json.loads(resp.read().decode("utf-8"))


def site_url(site_base, url):
    """The page name if url is one of the loopback site's pages, else None."""
    prefix = site_base.rstrip("/") + "/"
    if isinstance(url, str) and url.startswith(prefix) and url[len(prefix):] in SITE_PAGES:
        return url[len(prefix):]
    return None


def cmd_site(site_base):
    q = urllib.parse.quote("Lantern Tide festival Varnholm")
    try:
        status, doc = get_json(f"{site_base}/search?q={q}", timeout=10)
    except Exception as e:  # noqa: BLE001 - any failure is the check's failure
        return check(False, "loopback site answers /search with JSON", repr(e))
    urls = [r.get("url") for r in doc.get("results", [])]
    check(status == 200 and urls, "loopback site answers /search with JSON results", f"HTTP {status}, {urls}")
    check(urls[:1] == [f"{site_base}/{QUESTION_PAGE}"], "loopback site ranks the made-up page first", str(urls))


def cmd_searx(searx_base, site_base):
    q = urllib.parse.quote("Lantern Tide festival Varnholm")
    try:
        status, doc = get_json(f"{searx_base}/search?q={q}&format=json", timeout=20)
    except Exception as e:  # noqa: BLE001
        return check(False, "searx answers /search?format=json", repr(e))
    check(status == 200 and isinstance(doc.get("results"), list), "searx answers /search?format=json with results[]")
    urls = [r.get("url") for r in doc.get("results", [])]
    engines = {r.get("engine") for r in doc.get("results", [])}
    check(
        f"{site_base}/{QUESTION_PAGE}" in urls and engines == {"almanac"},
        "searx lists the made-up page, found by our json_engine 'almanac'",
        f"urls={urls} engines={engines} unresponsive={doc.get('unresponsive_engines')}",
    )


def cmd_llm(llama_base):
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "string", "maxLength": 80}},
        "required": ["answer"],
        "additionalProperties": False,
    }
    body = {
        "model": "smollm2",
        "messages": [{"role": "user", "content": "What colour is the sky on a clear day? Reply in JSON."}],
        "max_tokens": 64,
        "temperature": 0,
        "response_format": {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}},
    }
    try:
        status, doc = get_json(f"{llama_base}/v1/chat/completions", body, timeout=120)
        content = doc["choices"][0]["message"]["content"]
    except Exception as e:  # noqa: BLE001
        return check(False, "llama.cpp answers /v1/chat/completions", repr(e))
    check(status == 200, "llama.cpp answers /v1/chat/completions")
    try:
        parsed = json.loads(content)
    except ValueError as e:
        parsed = None
        why = f"{e}: {content!r}"
    else:
        why = repr(content)
    check(
        isinstance(parsed, dict) and isinstance(parsed.get("answer"), str),
        "llama.cpp honours response_format json_schema (content is JSON with `answer`)",
        why,
    )


def load_reply(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        doc = json.loads(text)
    except ValueError as e:
        return None, f"{e}; stdout starts {text[:200]!r}"
    return doc, ""


def cmd_answer(path, rc, site_base):
    rc = int(rc)
    check(rc in (0, 6), f"ground answer exits 0 or 6 (got {rc}: {'success' if rc == 0 else 'not grounded' if rc == 6 else 'an error'})")
    doc, why = load_reply(path)
    if not check(isinstance(doc, dict), "stdout is exactly one JSON object", why):
        return
    if "error" in doc:
        err = doc["error"] if isinstance(doc["error"], dict) else {}
        print(f"info: ground answered with an error: {err.get('kind')}: {err.get('message')}"[:600])
        print(f"info: hint: {err.get('hint')}"[:300])
        check(err.get("exit_code") == rc, f"the JSON `error` object carries the exit code ({err.get('exit_code')})")
        return
    answer = doc.get("answer")
    check(isinstance(answer, str), "`answer` is a string", repr(answer)[:100])
    sources = doc.get("sources")
    check(isinstance(sources, list) and len(sources) > 0, "`sources[]` is a non-empty list", repr(sources)[:200])
    sources = sources if isinstance(sources, list) else []
    bad = [s for s in sources if not isinstance(s, dict) or s.get("status") not in STATUSES]
    check(not bad, "every source has a `status` out of " + "/".join(sorted(STATUSES)), repr(bad)[:300])
    fetched = [s.get("url") for s in sources if isinstance(s, dict) and s.get("status") == "SUCCESS"]
    check(
        f"{site_base}/{QUESTION_PAGE}" in fetched,
        "the made-up page was fetched (status SUCCESS) through --allow-private-addresses",
        f"SUCCESS sources: {fetched}",
    )
    cites = doc.get("citations")
    check(isinstance(cites, list), "`citations` is a list", repr(cites)[:100])
    cites = cites if isinstance(cites, list) else []
    foreign = [c.get("source_url") if isinstance(c, dict) else c for c in cites]
    foreign = [u for u in foreign if not site_url(site_base, u)]
    check(not foreign, f"every citations[].source_url is a loopback site page ({len(cites)} citations)", repr(foreign)[:300])
    gm = doc.get("groundingMetadata")
    check(isinstance(gm, dict), "`groundingMetadata` is an object")
    model = doc.get("model") if isinstance(doc.get("model"), dict) else {}
    print(
        f"info: exit {rc}; grounded={doc.get('grounded')} answerable={doc.get('answerable')} "
        f"citations={len(cites)} backend={model.get('backend')} attempts={model.get('attempts')} "
        f"prompt_tokens={model.get('prompt_tokens')} completion_tokens={model.get('completion_tokens')} "
        f"done_reason={model.get('done_reason')}"
    )
    print(f"info: answer: {answer!r}"[:400])


def strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for v in node.values():
            yield from strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from strings(v)


def cmd_search(path, rc, site_base):
    check(int(rc) == 0, f"ground search exits 0 (got {rc})")
    doc, why = load_reply(path)
    if not check(doc is not None, "ground search --json prints JSON", why):
        return
    check(
        f"{site_base}/{QUESTION_PAGE}" in set(strings(doc)),
        "ground search --json lists the made-up page's URL",
        json.dumps(doc)[:300],
    )


def cmd_error(path, rc):
    check(int(rc) == 3, f"with searx stopped, ground answer --json exits 3 (got {rc})")
    doc, why = load_reply(path)
    if not check(isinstance(doc, dict), "with searx stopped, stdout is still one JSON object", why):
        return
    err = doc.get("error") if isinstance(doc.get("error"), dict) else {}
    check(err.get("exit_code") == 3 and bool(err.get("message")), "its `error` has exit_code 3 and a message", json.dumps(doc)[:300])


def cmd_wait(url, seconds):
    deadline = time.monotonic() + float(seconds)
    while True:
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=HEADERS), timeout=5) as resp:
                if resp.status == 200:
                    return 0
        except Exception:  # noqa: BLE001 - not up yet
            pass
        if time.monotonic() > deadline:
            return 1
        time.sleep(0.25)


def main(argv):
    cmds = {"wait": (cmd_wait, 2), "site": (cmd_site, 1), "searx": (cmd_searx, 2), "llm": (cmd_llm, 1),
            "answer": (cmd_answer, 3), "search": (cmd_search, 3), "error": (cmd_error, 2)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) - 2 != cmds[argv[1]][1]:
        print(__doc__, file=sys.stderr)
        return 2
    result = cmds[argv[1]][0](*argv[2:])
    return result if argv[1] == "wait" else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
