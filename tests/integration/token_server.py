#!/usr/bin/env python3
"""The token service of a registry's token authentication, for the tests.

usage: token_server.py --port N --key KEY.pem --cert CERT.pem
                       [--user U --password P] [--lifetime S] [--log FILE]

GET /token?service=S&scope=repository:REPO:ACTIONS answers
{"token": JWT}: RS256, signed with KEY (by openssl), the certificate in
its x5c header, granting the scope's actions.  With --user, the request
must carry Basic credentials for U:P (else 401); without, anyone gets a
token (anonymous pull).  Tokens are good for --lifetime seconds (default
600; the registry allows 60 s of clock skew past a token's expiry, which
is taken off here).  Every request is logged as "AUTH SCOPE STATUS",
AUTH being "basic" or "anonymous"; a request with an X-Erofskit-Test
header logs a line "header VALUE" before (for the tests of -o header=).
"""
import argparse
import base64
import http.server
import json
import socketserver
import subprocess
import time
import urllib.parse


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, auth, scope):
        data = json.dumps(body).encode()
        # Logged before the answer leaves: a client that has its answer
        # finds it in the log.
        with open(self.server.log, "a") as f:
            if self.headers.get("X-Erofskit-Test"):
                f.write("header %s\n" % self.headers["X-Erofskit-Test"])
            f.write("%s %s %d\n" % (auth, scope, status))
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status == 401:
            self.send_header("WWW-Authenticate", 'Basic realm="token"')
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(url.query)
        scope = q.get("scope", [""])[0]
        given = self.headers.get("Authorization", "")
        auth = "basic" if given.startswith("Basic ") else "anonymous"
        srv = self.server
        if srv.user:
            want = "Basic " + base64.b64encode(("%s:%s" % (srv.user, srv.password)).encode()).decode()
            if given != want:
                self.answer(401, {"errors": [{"code": "UNAUTHORIZED"}]}, auth, scope)
                return
        access = []
        parts = scope.split(":")
        if len(parts) == 3 and parts[0] == "repository":
            access.append({"type": "repository", "name": parts[1],
                           "actions": parts[2].split(",")})
        now = int(time.time())
        header = {"typ": "JWT", "alg": "RS256", "x5c": [srv.cert_der]}
        claims = {"iss": "erofskit-token", "sub": srv.user or "anonymous",
                  "aud": q.get("service", [""])[0], "exp": now + srv.lifetime - 60,
                  "nbf": now - 10,
                  "iat": now, "jti": "%d" % time.monotonic_ns(), "access": access}
        signing = (b64url(json.dumps(header).encode()) + "." +
                   b64url(json.dumps(claims).encode())).encode()
        sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", srv.key],
                             input=signing, capture_output=True, check=True).stdout
        self.answer(200, {"token": signing.decode() + "." + b64url(sig)}, auth, scope)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--user")
    ap.add_argument("--password")
    ap.add_argument("--lifetime", type=int, default=600)
    ap.add_argument("--log", default="/dev/null")
    a = ap.parse_args()
    der = subprocess.run(["openssl", "x509", "-in", a.cert, "-outform", "DER"],
                         capture_output=True, check=True).stdout
    srv = Server(("127.0.0.1", a.port), Handler)
    srv.key, srv.user, srv.password, srv.log = a.key, a.user, a.password, a.log
    srv.lifetime = a.lifetime
    srv.cert_der = base64.b64encode(der).decode()
    srv.serve_forever()


if __name__ == "__main__":
    main()
