#!/usr/bin/env python3
"""A web server that serves one file with Range requests, and misbehaves.

usage: faulty_http.py --port N --file FILE --mode MODE [--log LOG]

Modes (the first FAULTS ranged GETs misbehave, then it serves correctly,
unless the mode says otherwise):
  ok        no fault
  drop      sends the headers and half the body, then closes the connection
  error500  answers 500 Internal Server Error
  stall     holds the answer 4 s before sending it (past a 1 s timeout)
  norange   ignores Range: 200 and the whole file, always
  liar      answers 206 with a Content-Range of other bytes, always
  noetag    no ETag and no Last-Modified, always correct
  change    serves FILE until FILE.next exists, then FILE.next with
            another ETag (the object replaced on the server)

Every request is logged as "METHOD RANGE STATUS BYTES" (one line each).
"""
import argparse
import hashlib
import http.server
import os
import re
import socketserver
import threading
import time

FAULTS = 3


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        pass   # a client that gives up on a stalled answer resets it


def content(path):
    with open(path, "rb") as f:
        data = f.read()
    return data, '"%s"' % hashlib.sha256(data).hexdigest()[:16]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def log(self, status, nbytes):
        with self.server.lock:
            with open(self.server.log, "a") as f:
                f.write("%s %s %d %d\n" % (self.command, self.headers.get("Range", "-"),
                                            status, nbytes))

    def current(self):
        nxt = self.server.file + ".next"
        if self.server.mode == "change" and os.path.exists(nxt):
            return content(nxt)
        return self.server.data, self.server.etag

    def fault(self):
        """Whether this ranged GET is one of the first FAULTS."""
        with self.server.lock:
            self.server.gets += 1
            return self.server.gets <= FAULTS

    def send(self, status, body, headers, etag, send_body=True):
        # Logged before the answer leaves, as the client may look at once.
        self.log(status, len(body) if send_body else 0)
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if etag and self.server.mode != "noetag":
            self.send_header("ETag", etag)
            self.send_header("Last-Modified", "Tue, 01 Dec 2026 00:00:00 GMT")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def do_HEAD(self):
        data, etag = self.current()
        self.send(200, data, [("Accept-Ranges", "bytes")], etag, send_body=False)

    def do_GET(self):
        data, etag = self.current()
        mode = self.server.mode
        m = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range", ""))
        if not m or mode == "norange":
            self.send(200, data, [], etag)
            return
        first, last = int(m.group(1)), min(int(m.group(2)), len(data) - 1)
        if first > last:
            self.send(416, b"", [("Content-Range", "bytes */%d" % len(data))], etag)
            return
        body = data[first:last + 1]
        crange = "bytes %d-%d/%d" % (first, last, len(data))
        if mode == "liar":
            crange = "bytes %d-%d/%d" % (first + 1, last + 1, len(data))
        faulty = mode in ("drop", "error500", "stall") and self.fault()
        if faulty and mode == "error500":
            self.send(500, b"try again later\n", [], None)
            return
        if faulty and mode == "stall":
            time.sleep(4)
        if faulty and mode == "drop":
            self.log(206, len(body) // 2)
            self.send_response(206)
            self.send_header("Content-Range", crange)
            self.send_header("ETag", etag)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.send(206, body, [("Content-Range", crange)], etag)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--file", required=True)
    ap.add_argument("--mode", required=True,
                    choices=["ok", "drop", "error500", "stall", "norange", "liar",
                             "noetag", "change"])
    ap.add_argument("--log", default=os.devnull)
    a = ap.parse_args()
    srv = Server(("127.0.0.1", a.port), Handler)
    srv.file, srv.mode, srv.log = a.file, a.mode, a.log
    srv.data, srv.etag = content(a.file)
    srv.lock = threading.Lock()
    srv.gets = 0
    srv.serve_forever()


if __name__ == "__main__":
    main()
