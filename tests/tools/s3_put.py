#!/usr/bin/env python3
"""Upload files to an S3-compatible server on the loopback address, for the remote-store tests.

Usage: s3_put.py ENDPOINT BUCKET PREFIX PATH [PATH...]

A folder PATH is uploaded recursively, key PREFIX/<name of PATH>/<path inside it>; a file PATH as
PREFIX/<its name>. Requests are anonymous PUTs (the test server, s3rver, accepts them), sent on
one kept-alive connection. Exits non-zero on the first failed upload.
"""

import http.client
import os
import sys
import urllib.parse


def main():
    endpoint, bucket, prefix, *paths = sys.argv[1:]
    url = urllib.parse.urlsplit(endpoint)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    count = 0

    def put(key, file):
        nonlocal count
        with open(file, "rb") as f:
            data = f.read()
        target = "/" + bucket + "/" + urllib.parse.quote(key, safe="/-_.~")
        conn.request("PUT", target, body=data, headers={"Content-Length": str(len(data))})
        r = conn.getresponse()
        body = r.read()
        if r.status != 200:
            sys.exit(f"s3_put.py: PUT {target}: HTTP {r.status}: {body[:200]!r}")
        count += 1

    for path in paths:
        path = path.rstrip("/")
        base = (prefix.strip("/") + "/" if prefix.strip("/") else "") + os.path.basename(path)
        if os.path.isdir(path):
            for d, _, files in os.walk(path):
                for name in files:
                    file = os.path.join(d, name)
                    put(base + "/" + os.path.relpath(file, path).replace(os.sep, "/"), file)
        else:
            put(base, path)
    print(f"s3_put.py: {count} objects uploaded")


if __name__ == "__main__":
    main()
