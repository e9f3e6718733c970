#!/usr/bin/env python3
"""Renders pages of the built documentation site in headless Chromium (Debian's `chromium`).

For each page: a screenshot (written to --out, checked to be a PNG of more than one colour),
and a load of the page inside a small wrapper page (file access between local files allowed)
that waits for it, then reports how many <img> the page has and which did not load
(complete with naturalWidth 0). Fails when Chromium logs any console message of the page
(errors, uncaught exceptions), when a page shows fewer images than asked (--min-images), or
when an image did not load. Without chromium it prints `skipped: ...` and exits 77 (ctest's
skip); under CI=true it fails instead.

Usage: docs_render.py --html build/docs/html --out DIR [--min-images N] PAGE.html...
"""

import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77
NOISE = re.compile(r"dbus|Fontconfig|vaapi|sandbox_linux|idle_linux|unexpected operator|"
                   r"gpu_init|viz_main|command_buffer|gl_surface|angle|ANGLE")


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run(browser, args, url, profile):
    cmd = [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--no-first-run", "--disable-extensions", "--enable-logging=stderr", "--v=0",
           f"--user-data-dir={profile}", *args, url]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=120)
    console = [line for line in p.stderr.splitlines() if ":CONSOLE" in line]
    return p, console


def png_colours(path):
    """Number of distinct byte values of the decoded image data (a blank page has very few)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return 0
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    return len(set(zlib.decompress(idat)))


WRAPPER = """<!DOCTYPE html><html><head><title>pending</title></head><body>
<iframe id="f" src="{url}" style="width:1280px;height:2000px"></iframe>
<script>
document.getElementById("f").addEventListener("load", function () {{
  setTimeout(function () {{
    var d = document.getElementById("f").contentDocument, imgs = d.images, bad = [];
    for (var i = 0; i < imgs.length; i++)
      if (!imgs[i].complete || imgs[i].naturalWidth === 0) bad.push(imgs[i].getAttribute("src"));
    var r = {{images: imgs.length, broken: bad, title: d.title, h1: (d.querySelector("div.body h1") || d.querySelector("h1") || {{}}).textContent || ""}};
    document.getElementById("result").textContent = JSON.stringify(r);
  }}, 1000);
}});
</script><pre id="result">pending</pre></body></html>"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--html", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--min-images", type=int, default=1)
    ap.add_argument("pages", nargs="+")
    args = ap.parse_args()
    browser = chromium()
    if not browser:
        if os.environ.get("CI") == "true":
            print("docs_render: error: chromium is missing (scripts/setup.sh installs it)",
                  file=sys.stderr)
            return 1
        print("skipped: chromium is missing (run scripts/setup.sh)")
        return SKIP
    os.makedirs(args.out, exist_ok=True)
    failures = []
    tmp = tempfile.mkdtemp(prefix="vczstats-render-")
    try:
        for page in args.pages:
            path = os.path.abspath(os.path.join(args.html, page))
            if not os.path.isfile(path):
                failures.append(f"{page}: not built ({path})")
                continue
            url = "file://" + path
            shot = os.path.join(args.out, page.replace("/", "_").replace(".html", ".png"))
            p, console = run(browser, ["--window-size=1280,6000", f"--screenshot={shot}"], url,
                             os.path.join(tmp, "profile1"))
            if p.returncode != 0 or not os.path.isfile(shot):
                failures.append(f"{page}: chromium --screenshot failed ({p.returncode}): "
                                f"{p.stderr[-500:]}")
                continue
            colours = png_colours(shot)
            if colours < 16:
                failures.append(f"{page}: the screenshot looks blank ({colours} byte values)")
            wrapper = os.path.join(tmp, "wrapper.html")
            with open(wrapper, "w", encoding="utf-8") as f:
                f.write(WRAPPER.format(url=url))
            p2, console2 = run(browser, ["--allow-file-access-from-files",
                                         "--virtual-time-budget=10000", "--dump-dom"],
                               "file://" + wrapper, os.path.join(tmp, "profile2"))
            m = re.search(r'<pre id="result">(.*?)</pre>', p2.stdout, re.S)
            try:
                result = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&")
                                    .replace("&lt;", "<").replace("&gt;", ">")) if m else None
            except ValueError:
                result = None
            if not result:
                failures.append(f"{page}: the page did not report its images: "
                                f"{(m.group(1) if m else p2.stdout[-300:])!r}")
                continue
            for line in console + console2:
                failures.append(f"{page}: console: {line.split(':CONSOLE', 1)[1]}")
            if result["images"] < args.min_images:
                failures.append(f"{page}: {result['images']} image(s), expected at least "
                                f"{args.min_images}")
            for src in result["broken"]:
                failures.append(f"{page}: image not shown: {src}")
            print(f"{page}: title {result['title']!r}, h1 {result['h1'].strip('¶ ')!r}, "
                  f"{result['images']} image(s), {len(result['broken'])} broken, "
                  f"{len(console) + len(console2)} console message(s); screenshot {shot} "
                  f"({os.path.getsize(shot)} bytes, {colours} byte values)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print(f"FAILED {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
