"""Generates the CLI reference (reference/cli/*.md) from the built binary's --help.

Runs when Sphinx starts (builder-inited), before the sources are read: `vczstats --help` gives the
command groups and their one-line summaries; `vczstats CMD --help` of every command becomes the
page of that command, verbatim (options and the Examples section). The pages are written into
reference/cli/, which git ignores; a command listed by --help without an Examples section is an
error, so the reference and the help cannot drift apart.
"""

import os
import re
import subprocess

from sphinx.errors import ConfigError
from sphinx.util import logging

logger = logging.getLogger(__name__)


def _help(binary, *args):
    out = subprocess.run([binary, *args, "--help"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=60)
    if out.returncode != 0:
        raise ConfigError(f"cli_reference: `{binary} {' '.join(args)} --help` exited "
                          f"{out.returncode}:\n{out.stdout}")
    return out.stdout


def parse_groups(top_help):
    """[(group, [(command, summary), ...]), ...] from the top-level --help."""
    groups = []
    for line in top_help.splitlines():
        if re.match(r"^[A-Z][^:]*:$", line) and line not in ("Options:", "Examples:"):
            groups.append((line[:-1], []))
        elif groups and re.match(r"^  [a-z][a-z0-9-]*\s{2,}\S", line):
            name, summary = line.strip().split(None, 1)
            groups[-1][1].append((name, summary.strip()))
        elif groups and line and not line.startswith(" "):
            groups.append(("", []))  # the end of the command list
    return [(g, cmds) for g, cmds in groups if g and cmds]


def fence(text):
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}text\n{text.rstrip()}\n{ticks}\n"


def write_if_changed(path, text):
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def generate(app):
    binary = app.config.vczstats_bin
    if not os.access(binary, os.X_OK):
        raise ConfigError(f"cli_reference: no vczstats binary at {binary} (build it: "
                          "bash scripts/build.sh, or set VCZSTATS_BIN)")
    out_dir = os.path.join(app.srcdir, "reference", "cli")
    os.makedirs(out_dir, exist_ok=True)
    top = _help(binary)
    groups = parse_groups(top)
    if not groups:
        raise ConfigError(f"cli_reference: found no commands in `{binary} --help`")
    names = []
    index = ["# Command-line reference", "",
             "Generated when the documentation is built, from the `--help` of the binary it was "
             "built with (`vczstats --help`, then `vczstats COMMAND --help` for each command), so "
             "it says what that binary accepts. Options common to the statistic commands are "
             "explained in [Common options](../common-options.md); the columns of each table in "
             "[Output formats](../output-formats.md).", "",
             "## vczstats --help", "", fence(top)]
    for group, commands in groups:
        index += [f"## {group}", "", "| command | what |", "| --- | --- |"]
        for name, summary in commands:
            index.append(f"| [`{name}`]({name}.md) | {summary} |")
            names.append(name)
            text = _help(binary, name)
            if "\nExamples:\n" not in text:
                raise ConfigError(f"cli_reference: `vczstats {name} --help` has no Examples "
                                  "section")
            page = [f"# vczstats {name}", "", f"{summary}.", "",
                    f"The output of `vczstats {name} --help`:", "", fence(text)]
            write_if_changed(os.path.join(out_dir, f"{name}.md"), "\n".join(page))
        index.append("")
    index += ["```{toctree}", ":hidden:", "", *names, "```", ""]
    write_if_changed(os.path.join(out_dir, "index.md"), "\n".join(index))
    # Pages of commands that no longer exist would be orphans: remove them.
    for f in os.listdir(out_dir):
        if f.endswith(".md") and f != "index.md" and f[:-3] not in names:
            os.remove(os.path.join(out_dir, f))
    logger.info(f"cli_reference: {len(names)} command pages from {binary}")


def setup(app):
    app.add_config_value("vczstats_bin", "vczstats", "env")
    app.connect("builder-inited", generate)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
