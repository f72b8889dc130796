#!/usr/bin/env python3
"""A loopback stand-in for a SearXNG with JSON off, in front of the real searx 1.1.

    json_off_proxy.py --upstream http://127.0.0.1:PORT --port-file FILE

searx 1.1 always serves format=json (it has no `search.formats`), so this answers
`/search?...format=json` with SearXNG's own 403 page and passes every other request
(the HTML results page among them) to searx unchanged. Listens on 127.0.0.1 only and
writes its port to FILE when ready.
"""
import argparse
import http.server
import urllib.error
import urllib.parse
import urllib.request

FORBIDDEN = (b"<!doctype html>\n<html lang=en>\n<title>403 Forbidden</title>\n<h1>Forbidden</h1>\n"
             b"<p>You don&#39;t have the permission to access the requested resource.</p>\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--port-file", required=True)
    args = parser.parse_args()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            if query.get("format") == ["json"]:
                self.send_response(403)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(FORBIDDEN)))
                self.end_headers()
                self.wfile.write(FORBIDDEN)
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "accept-encoding")}
            request = urllib.request.Request(args.upstream + self.path, headers=headers)
            try:
                with urllib.request.urlopen(request, timeout=30) as reply:
                    status, body, ctype = reply.status, reply.read(), reply.headers.get("Content-Type", "")
            except urllib.error.HTTPError as e:
                status, body, ctype = e.code, e.read(), e.headers.get("Content-Type", "")
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(args.port_file, "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
