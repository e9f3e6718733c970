"""Generates the Python API reference (reference/python-api.md).

When the built package imports (config value vczstats_pythonpath, i.e. build/python, on
sys.path), the page is autodoc of every name in vczstats.__all__. When it does not (the extension
module was not built), the page says so in a warning box and shows the docstrings of the pure-
Python layer (python/vczstats/*.py) read with ast, so the site still builds; scripts/docs.sh
prints which of the two it was.
"""

import ast
import importlib
import os
import sys

from sphinx.util import logging

logger = logging.getLogger(__name__)


def _autodoc_page(module):
    lines = ["# Python API", "",
             "Generated from the docstrings of the built package (`build/python`, "
             "`import vczstats`) when the documentation is built. How to install it is in "
             "[Install](../start/install.md); a worked session in "
             "[Python quickstart](../start/quickstart-python.md).", "",
             "```{eval-rst}", ".. automodule:: vczstats", "   :no-members:", "```", ""]
    for name in module.__all__:
        obj = getattr(module, name)
        if isinstance(obj, type):
            kind = "autoexception" if issubclass(obj, BaseException) else "autoclass"
            opts = [] if kind == "autoexception" else ["   :members:"]
        elif callable(obj):
            kind, opts = "autofunction", []
        elif hasattr(obj, "__file__"):
            continue  # a submodule (vczstats.plot): below
        else:
            kind, opts = "autodata", []
        lines += ["```{eval-rst}", f".. {kind}:: vczstats.{name}", *opts, "```", ""]
    lines += ["## Plots (`vczstats.plot`)", "", "```{eval-rst}", ".. automodule:: vczstats.plot",
              "   :members:", "```", ""]
    return "\n".join(lines)


def _fallback_page(source_dir, reason):
    lines = ["# Python API", "", ":::{warning}",
             f"The Python package was not importable when this site was built ({reason}), so "
             "this page lists the docstrings of its Python layer as plain text. Build the "
             "module (`bash scripts/build.sh`) and the docs again for the full reference.",
             ":::", ""]
    for fname in sorted(os.listdir(source_dir)):
        if not fname.endswith(".py"):
            continue
        with open(os.path.join(source_dir, fname), encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                doc = ast.get_docstring(node)
                if doc:
                    lines += [f"## `{node.name}` ({fname})", "", "```text", doc, "```", ""]
    return "\n".join(lines)


def generate(app):
    path = app.config.vczstats_pythonpath
    out = os.path.join(app.srcdir, "reference", "python-api.md")
    if path and path not in sys.path:
        sys.path.insert(0, path)
    try:
        module = importlib.import_module("vczstats")
        text = _autodoc_page(module)
        logger.info(f"python_reference: autodoc of vczstats from {module.__file__}")
    except ImportError as e:
        text = _fallback_page(os.path.join(os.path.dirname(app.srcdir), "python", "vczstats"),
                              str(e))
        logger.info(f"python_reference: vczstats not importable ({e}); docstrings as text")
    old = None
    if os.path.exists(out):
        with open(out, encoding="utf-8") as f:
            old = f.read()
    if old != text:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)


def setup(app):
    app.add_config_value("vczstats_pythonpath", "", "env")
    app.connect("builder-inited", generate)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
