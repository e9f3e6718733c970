#!/usr/bin/env python3
"""A small HTTP server for the remote-store tests: serves the files under --root (GET and HEAD,
single byte ranges, ETag, 404) on 127.0.0.1 and makes the faults a test asks for.

Usage: fault_server.py --root DIR [--port 0] [--seed N] [fault options]

Prints "PORT <n>" on its first line of stdout once it listens; stops on SIGTERM, or by itself
after --lifetime seconds (default 600), so a test that dies cannot leave it behind for long.

Faults (probabilities per request, drawn from a seeded generator):
  --drop P        close the connection without an answer, or halfway through the body
  --error500 P    answer 500 Internal Server Error
  --truncate P    announce the full Content-Length, send half the body, close
  --delay S       wait S seconds before each answer, and trickle the body in 4 pieces
  --stall         accept requests and never answer (the connection stays open, silent)
  --status CODE   answer every request with CODE (e.g. 403)
  --sigv4 AK:SK   check AWS Signature V4 (written here from AWS's specification, independently
                  of libcurl): a wrong key or signature is answered 403 with S3's XML error
  --log FILE      one line per request: method, path, Range, status, time (s)
  --latency S     wait S seconds before each answer (a fixed round trip, like an object store's)

Misbehaviours (on every request whose path contains --fault-path, default all):
  --drip BPS      send the body at BPS bytes a second, with a correct Content-Length
  --endless       a 200 or 206 without Content-Length whose body never ends (until the client
                  goes away or --lifetime)
  --huge-length   announce a Content-Length of 16 GiB, send the real body, close
  --deep-json N   answer .zmetadata with a document nested N levels deep
  --loop-listing  every folder's HTML listing links to a sub-folder a/
  --loop-token    ListObjectsV2 pages are always truncated, with the same continuation token
  --retry-after S the first request of each path is answered 503 with Retry-After: S
  --fuzz P        with probability P, answer with a mangled response (malformed or lying
                  Content-Range / Content-Length, odd statuses, redirects without a target,
                  huge or broken header lines, bytes past the body), then close

GET /BUCKET?list-type=2 answers S3's ListObjectsV2 (prefix, delimiter, continuation-token) in
pages of 7 keys, so signed listings and paging are tested too.
"""

import argparse
import email.utils
import hashlib
import hmac
import http.server
import os
import random
import signal
import socketserver
import sys
import threading
import time
import urllib.parse

ARGS = None
RNG = None
RNG_LOCK = threading.Lock()
LOG_LOCK = threading.Lock()
SEEN = set()  # paths answered once (--retry-after)


def draw(p):
    if p <= 0:
        return False
    with RNG_LOCK:
        return RNG.random() < p


def uri_encode(s, keep_slash):
    safe = "-_.~" + ("/" if keep_slash else "")
    return urllib.parse.quote(s, safe=safe)


def sigv4_problem(handler):
    """None when the request's signature is right, else (S3 error code, message)."""
    access, secret = ARGS.sigv4.split(":", 1)
    auth = handler.headers.get("Authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return ("AccessDenied", "no AWS4-HMAC-SHA256 Authorization header")
    fields = {}
    for part in auth[len("AWS4-HMAC-SHA256 "):].split(","):
        k, _, v = part.strip().partition("=")
        fields[k] = v
    try:
        credential = fields["Credential"]
        signed_headers = fields["SignedHeaders"]
        signature = fields["Signature"]
    except KeyError:
        return ("AuthorizationHeaderMalformed", "missing Credential, SignedHeaders or Signature")
    key_id, date, region, service, terminal = credential.split("/")
    if key_id != access:
        return ("InvalidAccessKeyId", "unknown access key " + key_id)
    amz_date = handler.headers.get("x-amz-date", "")
    payload = handler.headers.get("x-amz-content-sha256")
    if payload is None:
        return ("InvalidRequest", "missing x-amz-content-sha256")
    url = urllib.parse.urlsplit(handler.path)
    pairs = urllib.parse.parse_qsl(url.query, keep_blank_values=True)
    query = "&".join(
        f"{uri_encode(k, False)}={uri_encode(v, False)}" for k, v in sorted(pairs))
    names = signed_headers.split(";")
    canonical_headers = ""
    for name in names:
        value = handler.headers.get(name)
        if value is None:
            return ("AccessDenied", "signed header " + name + " is missing")
        canonical_headers += name + ":" + " ".join(value.split()) + "\n"
    canonical = "\n".join([handler.command, url.path, query, canonical_headers, signed_headers,
                           payload])
    scope = f"{date}/{region}/{service}/{terminal}"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    k = hmac.new(("AWS4" + secret).encode(), date.encode(), hashlib.sha256).digest()
    for part in (region, service, terminal):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    expected = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, signature):
        return ("SignatureDoesNotMatch",
                "The request signature we calculated does not match the signature you provided.")
    return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def note(self, status):
        if ARGS.log:
            with LOG_LOCK, open(ARGS.log, "a") as f:
                f.write(f"{self.command} {self.path} {self.headers.get('Range', '-')} {status} "
                        f"{time.time():.3f}\n")

    def simple(self, status, body=b"", content_type="text/plain"):
        self.note(status)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def s3_error(self, status, code, message):
        body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
                f"<Message>{message}</Message></Error>").encode()
        self.simple(status, body, "application/xml")

    def do_HEAD(self):
        self.answer()

    def do_GET(self):
        self.answer()

    def faulty(self):
        return ARGS.fault_path in self.path

    def misbehave(self):
        """Answer with a misbehaviour when one is asked for; True when answered."""
        if not self.faulty():
            return False
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        if ARGS.retry_after is not None:
            with RNG_LOCK:
                first = path not in SEEN
                SEEN.add(path)
            if first:
                self.note(503)
                self.send_response(503)
                self.send_header("Retry-After", ARGS.retry_after)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return True
        if ARGS.deep_json and path.endswith(".zmetadata"):
            n = ARGS.deep_json
            body = ('{"metadata": {".zgroup": ' + "[" * n + "]" * n + '}}').encode()
            self.simple(200, body, "application/json")
            return True
        if ARGS.loop_listing and path.endswith("/"):
            # A folder's real entries, and a sub-folder a/ that lists a/ again, forever.
            folder = os.path.join(ARGS.root, path.lstrip("/"))
            names = ["a/"]
            if os.path.isdir(folder):
                names += sorted(n + ("/" if os.path.isdir(os.path.join(folder, n)) else "")
                                for n in os.listdir(folder))
            links = "".join(f'<a href="{urllib.parse.quote(n)}">{n}</a>\n' for n in names)
            self.simple(200, f"<html><body>{links}</body></html>".encode(), "text/html")
            return True
        if ARGS.loop_token and "list-type=2" in self.path:
            body = ('<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult><Name>b</Name>'
                    "<IsTruncated>true</IsTruncated>"
                    "<Contents><Key>x/.zgroup</Key><Size>1</Size></Contents>"
                    "<NextContinuationToken>same</NextContinuationToken></ListBucketResult>")
            self.simple(200, body.encode(), "application/xml")
            return True
        if ARGS.endless and self.command == "GET":
            self.note("endless")
            rng = self.headers.get("Range")
            self.send_response(206 if rng else 200)
            if rng and rng.startswith("bytes=") and not rng.startswith("bytes=-"):
                first = int(rng[6:].partition("-")[0])
                self.send_header("Content-Range", f"bytes {first}-{first + (1 << 40)}/*")
            self.send_header("Connection", "close")
            self.end_headers()
            block = b"\0" * (1 << 16)
            end = time.time() + ARGS.lifetime
            try:
                while time.time() < end:
                    self.wfile.write(block)
            except OSError:
                pass
            self.close_connection = True
            return True
        return False

    def fuzzed(self):
        """A mangled answer to this request (fault --fuzz): the raw bytes of a response that a
        client must reject, retry or read correctly, never misread."""
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        file = os.path.realpath(os.path.join(ARGS.root, path.lstrip("/")))
        data = b""
        if os.path.isfile(file) and file.startswith(os.path.realpath(ARGS.root) + os.sep):
            with open(file, "rb") as f:
                data = f.read()
        first, last = 0, max(0, len(data) - 1)
        rng = self.headers.get("Range", "")
        if rng.startswith("bytes=") and "-" in rng:
            a, _, b = rng[6:].partition("-")
            if a:
                first, last = int(a), min(int(b) if b else len(data) - 1, len(data) - 1)
            else:
                first = max(0, len(data) - int(b))
        body = data[first:last + 1]
        with RNG_LOCK:
            kind = RNG.randrange(12)
            junk = bytes(RNG.randrange(256) for _ in range(64))
        head = []
        if kind == 0:  # a Content-Range that starts one byte late
            head = ["HTTP/1.1 206 Partial Content", f"Content-Length: {len(body)}",
                    f"Content-Range: bytes {first + 1}-{last + 1}/{len(data)}"]
        elif kind == 1:  # a Content-Range that is not one
            head = ["HTTP/1.1 206 Partial Content", f"Content-Length: {len(body)}",
                    "Content-Range: bytes x-y/z"]
        elif kind == 2:  # a 206 without Content-Range
            head = ["HTTP/1.1 206 Partial Content", f"Content-Length: {len(body)}"]
        elif kind == 3:  # a Content-Length that is not a number
            head = ["HTTP/1.1 200 OK", "Content-Length: 12abc"]
        elif kind == 4:  # two Content-Lengths that disagree
            head = ["HTTP/1.1 200 OK", f"Content-Length: {len(body)}",
                    f"Content-Length: {len(body) + 5}"]
        elif kind == 5:  # an odd status
            head = ["HTTP/1.1 418 I'm a teapot", "Content-Length: 0"]
            body = b""
        elif kind == 6:  # a redirect to nowhere
            head = ["HTTP/1.1 302 Found", "Content-Length: 0"]
            body = b""
        elif kind == 7:  # a header line of 100 KB
            head = ["HTTP/1.1 200 OK", "X-Long: " + "a" * 100000, f"Content-Length: {len(data)}"]
            body = data
        elif kind == 8:  # a header without a colon and binary junk
            head = ["HTTP/1.1 200 OK", "this is not a header", "X-Junk: " + junk.hex(),
                    f"Content-Length: {len(data)}"]
            body = data
        elif kind == 9:  # bytes past the announced body
            head = ["HTTP/1.1 200 OK", f"Content-Length: {len(data)}"]
            body = data + junk
        elif kind == 10:  # a status line that is not one
            head = ["HTTP/1.1 2x0 Maybe"]
        else:  # a 206 whose Content-Range total lies (smaller than the range)
            head = ["HTTP/1.1 206 Partial Content", f"Content-Length: {len(body)}",
                    f"Content-Range: bytes {first}-{last}/{max(0, last - 1)}",
                    "Retry-After: soon"]
        self.note(f"fuzz{kind}")
        raw = ("\r\n".join(head + ["Connection: close"]) + "\r\n\r\n").encode() + body
        try:
            self.wfile.write(raw)
            self.wfile.flush()
        except OSError:
            pass
        self.close_connection = True

    def answer(self):
        if ARGS.latency > 0:
            time.sleep(ARGS.latency)
        if ARGS.fuzz > 0 and self.command == "GET" and draw(ARGS.fuzz):
            return self.fuzzed()
        if self.misbehave():
            return
        if ARGS.stall:
            self.note("stall")
            time.sleep(ARGS.lifetime)
            self.close_connection = True
            return
        if ARGS.delay > 0:
            time.sleep(ARGS.delay)
        if ARGS.status:
            if ARGS.status == 403:
                return self.s3_error(403, "AccessDenied", "Access Denied")
            return self.simple(ARGS.status, f"status {ARGS.status}\n".encode())
        if ARGS.sigv4:
            problem = sigv4_problem(self)
            if problem:
                return self.s3_error(403, *problem)
        if draw(ARGS.error500):
            return self.simple(500, b"injected failure\n")
        # A dropped request loses its connection before the answer or halfway through the body.
        dropped = draw(ARGS.drop)
        if dropped and draw(0.5):
            self.note("drop")
            self.close_connection = True
            self.connection.shutdown(2)
            return
        split = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(split.query, keep_blank_values=True))
        if query.get("list-type") == "2":
            return self.list_objects(urllib.parse.unquote(split.path), query)
        path = urllib.parse.unquote(split.path)
        file = os.path.realpath(os.path.join(ARGS.root, path.lstrip("/")))
        root = os.path.realpath(ARGS.root)
        if not (file == root or file.startswith(root + os.sep)) or not os.path.isfile(file):
            return self.simple(404, b"not found\n")
        with open(file, "rb") as f:
            data = f.read()
        st = os.stat(file)
        etag = '"%x-%x"' % (int(st.st_mtime_ns), st.st_size)
        status, first, last = 200, 0, len(data) - 1
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes=") and "," not in rng:
            a, _, b = rng[6:].partition("-")
            if a == "":
                n = int(b)
                first, last = max(0, len(data) - n), len(data) - 1
            else:
                first = int(a)
                last = min(int(b), len(data) - 1) if b else len(data) - 1
            if first >= len(data):
                return self.simple(416, b"range not satisfiable\n")
            status = 206
        body = data[first:last + 1]
        self.note(status)
        self.send_response(status)
        huge = ARGS.huge_length and self.faulty()
        self.send_header("Content-Length", str(16 << 30 if huge else len(body)))
        self.send_header("ETag", etag)
        self.send_header("Last-Modified", email.utils.formatdate(st.st_mtime, usegmt=True))
        self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", f"bytes {first}-{last}/{len(data)}")
        self.end_headers()
        if self.command == "HEAD":
            return
        if huge:
            self.wfile.write(body)
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if ARGS.drip > 0 and self.faulty():
            end = time.time() + ARGS.lifetime
            try:
                for i in range(len(body)):
                    if time.time() > end:
                        break
                    self.wfile.write(body[i:i + 1])
                    self.wfile.flush()
                    time.sleep(1.0 / ARGS.drip)
            except OSError:
                pass
            self.close_connection = True
            return
        if draw(ARGS.truncate) or (dropped and len(body) > 1):
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if ARGS.delay > 0:
            step = max(1, len(body) // 4)
            for i in range(0, len(body), step):
                self.wfile.write(body[i:i + step])
                self.wfile.flush()
                time.sleep(ARGS.delay / 4)
        else:
            self.wfile.write(body)


def xml_escape(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def list_objects_page(root, bucket, prefix, delimiter, start_after, max_keys):
    """S3 ListObjectsV2 of the files under root/bucket: (keys with sizes, common prefixes,
    truncated)."""
    base = os.path.join(root, bucket)
    keys = []
    for d, _, files in os.walk(base):
        for f in files:
            key = os.path.relpath(os.path.join(d, f), base).replace(os.sep, "/")
            if key.startswith(prefix):
                keys.append((key, os.path.getsize(os.path.join(d, f))))
    keys.sort()
    entries, prefixes = [], []
    for key, size in keys:
        if key <= start_after:
            continue
        rest = key[len(prefix):]
        if delimiter and delimiter in rest:
            p = prefix + rest[:rest.index(delimiter) + 1]
            if p not in prefixes and p > start_after:
                prefixes.append(p)
                entries.append(("prefix", p))
            continue
        entries.append(("key", (key, size)))
    return entries[:max_keys], len(entries) > max_keys


def _list_objects(self, path, query):
    bucket = path.strip("/").split("/")[0]
    prefix = query.get("prefix", "")
    start = query.get("continuation-token", "")
    entries, truncated = list_objects_page(ARGS.root, bucket, prefix, query.get("delimiter", ""),
                                           start, 7)  # small pages: the test sees paging
    body = ['<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult>',
            f"<Name>{bucket}</Name><Prefix>{xml_escape(prefix)}</Prefix>",
            f"<IsTruncated>{'true' if truncated else 'false'}</IsTruncated>"]
    for kind, value in entries:
        if kind == "key":
            body.append(f"<Contents><Key>{xml_escape(value[0])}</Key><Size>{value[1]}</Size>"
                        "</Contents>")
        else:
            body.append(f"<CommonPrefixes><Prefix>{xml_escape(value)}</Prefix></CommonPrefixes>")
    if truncated:
        last = entries[-1][1] if entries[-1][0] == "prefix" else entries[-1][1][0]
        body.append(f"<NextContinuationToken>{xml_escape(last)}</NextContinuationToken>")
    body.append("</ListBucketResult>")
    self.simple(200, "".join(body).encode(), "application/xml")


Handler.list_objects = _list_objects


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def main():
    global ARGS, RNG
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--root", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--drop", type=float, default=0)
    p.add_argument("--error500", type=float, default=0)
    p.add_argument("--truncate", type=float, default=0)
    p.add_argument("--delay", type=float, default=0)
    p.add_argument("--stall", action="store_true")
    p.add_argument("--status", type=int, default=0)
    p.add_argument("--sigv4", default="")
    p.add_argument("--log", default="")
    p.add_argument("--lifetime", type=float, default=600)
    p.add_argument("--latency", type=float, default=0)
    p.add_argument("--fault-path", default="")
    p.add_argument("--drip", type=float, default=0)
    p.add_argument("--endless", action="store_true")
    p.add_argument("--huge-length", action="store_true")
    p.add_argument("--deep-json", type=int, default=0)
    p.add_argument("--loop-listing", action="store_true")
    p.add_argument("--loop-token", action="store_true")
    p.add_argument("--retry-after", default=None)
    p.add_argument("--fuzz", type=float, default=0)
    ARGS = p.parse_args()
    RNG = random.Random(ARGS.seed)
    server = Server(("127.0.0.1", ARGS.port), Handler)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    threading.Timer(ARGS.lifetime, lambda: os._exit(0)).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
