"""Generates the C++ header reference (reference/cpp-headers.md) from include/vczstats/*.hpp.

For each public header: its `/// @file` summary, then every declaration that has a `/// @brief`
comment, with that comment, as one C++ block (the comments and declaration lines as written,
implementation left out). Written into reference/ (git-ignored) when Sphinx starts, so the page
follows the headers.
"""

import os
import re

from sphinx.util import logging

logger = logging.getLogger(__name__)


def header_entries(text):
    """(file summary, [(comment lines, declaration lines)]) of one header."""
    lines = text.splitlines()
    summary, entries = [], []
    i = 0
    while i < len(lines):
        if not lines[i].lstrip().startswith("///"):
            i += 1
            continue
        block = []
        while i < len(lines) and lines[i].lstrip().startswith("///"):
            block.append(lines[i].strip())
            i += 1
        joined = " ".join(block)
        if "@file" in joined:
            summary = [re.sub(r"^///\s?", "", b) for b in block if "@file" not in b]
            summary = [re.sub(r"^@brief\s*", "", s) for s in summary]
            continue
        if "@brief" not in joined:
            continue
        decl = []
        while i < len(lines) and len(decl) < 4:
            line = lines[i].rstrip()
            if not line.strip() or line.lstrip().startswith("//"):
                break
            decl.append(line.strip())
            if re.search(r"[{;]\s*$", line) or line.rstrip().endswith("{"):
                break
            i += 1
        decl = [re.sub(r"\s*\{\s*$", "", d) for d in decl]
        if decl and not decl[-1].endswith(";"):
            decl[-1] = decl[-1] + (";" if decl[-1].endswith(")") or decl[-1].endswith("const")
                                   else "")
        entries.append((block, decl))
    return " ".join(summary), entries


def generate(app):
    repo = os.path.dirname(app.srcdir)
    inc = os.path.join(repo, "include", "vczstats")
    out = os.path.join(app.srcdir, "reference", "cpp-headers.md")
    page = ["# C++ headers", "",
            "Generated when the documentation is built from the public headers in "
            "`include/vczstats/`: each header's summary, then every declaration with a "
            "`/// @brief` comment, as written there. How the pieces fit together: "
            "[The C++ library](cpp.md).", ""]
    count = 0
    for name in sorted(os.listdir(inc)):
        if not name.endswith(".hpp"):
            continue
        with open(os.path.join(inc, name), encoding="utf-8") as f:
            summary, entries = header_entries(f.read())
        page += [f"## `vczstats/{name}`", ""]
        if summary:
            page += ["```text", summary, "```", ""]
        if entries:
            page.append("```cpp")
            for block, decl in entries:
                page += block + decl + [""]
            if page[-1] == "":
                page.pop()
            page += ["```", ""]
        count += len(entries)
    text = "\n".join(page)
    old = open(out, encoding="utf-8").read() if os.path.exists(out) else None
    if old != text:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
    logger.info(f"cpp_reference: {count} declarations from {inc}")


def setup(app):
    app.connect("builder-inited", generate)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
