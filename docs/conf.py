"""Sphinx configuration of the vczstats documentation (built by scripts/docs.sh).

Pages are Markdown (MyST). Two parts are generated at build time from the code, so they cannot
drift: the CLI reference (one page per command, from the built binary's --help; see
_ext/cli_reference.py) and the Python API (autodoc of the built package, when it imports).
"""

import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(here)
sys.path.insert(0, os.path.join(here, "_ext"))

project = "vczstats"
author = "the vczstats authors"
copyright = "2026, the vczstats authors"

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.mathjax",
              "cli_reference", "python_reference", "cpp_reference"]
# The Python docstrings are numpydoc (Parameters, Returns, Examples sections).
napoleon_google_docstring = False
napoleon_preprocess_types = True  # "optional", {"a", "b"} and numbers are not classes
# Words of the docstrings' types that name no class of this site.
napoleon_type_aliases = {"path": ":class:`str` or :class:`os.PathLike`",
                         "mapping": ":class:`~collections.abc.Mapping`",
                         "DataFrame": ":class:`pandas.DataFrame`"}

# MathJax renders the formulas. Debian's libjs-mathjax (MathJax 2, installed by scripts/setup.sh)
# is copied into the site so it renders offline; without it the browser loads MathJax from its
# CDN, only on pages with math.
_local_mathjax = "/usr/share/javascript/mathjax"
if os.path.exists(os.path.join(_local_mathjax, "MathJax.js")):
    mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML"
    # MathJax 2 reads a window.MathJax object as its own configuration: no MathJax 3 options.
    myst_update_mathjax = False
    mathjax3_config = None
    mathjax2_config = {"tex2jax": {"inlineMath": [["\\(", "\\)"]],
                                   "displayMath": [["\\[", "\\]"]]}}
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "README.md"]
root_doc = "index"

# The binary whose --help becomes the CLI reference: $VCZSTATS_BIN, else build/vczstats.
vczstats_bin = os.environ.get("VCZSTATS_BIN", os.path.join(repo, "build", "vczstats"))
# Where the built Python package lies (its _core extension): $VCZSTATS_PYTHONPATH, else
# build/python.
vczstats_pythonpath = os.environ.get("VCZSTATS_PYTHONPATH", os.path.join(repo, "build", "python"))

html_theme = "alabaster"
html_title = "vczstats"
html_static_path = []
if os.path.exists(os.path.join(_local_mathjax, "MathJax.js")):
    # The contents of a static folder land in _static/: a temporary folder holding a link named
    # mathjax puts MathJax in _static/mathjax/.
    import atexit
    import shutil
    import tempfile

    _static = tempfile.mkdtemp(prefix="vczstats-docs-static-")
    atexit.register(shutil.rmtree, _static, True)
    os.symlink(_local_mathjax, os.path.join(_static, "mathjax"))
    html_static_path = [_static]
html_theme_options = {"description": "Population genetics from VCF Zarr", "fixed_sidebar": True,
                      "page_width": "1100px", "sidebar_width": "240px"}
html_sidebars = {"**": ["about.html", "navigation.html", "searchbox.html"]}
nitpicky = True
# "--make-rel" stays two hyphens (no en dash), quotes stay straight: pages quote options.
smartquotes = False
# Types named in the Python package's signatures that have no page here (no intersphinx: the
# build uses no network): numpy's, the standard library's, matplotlib's and private ones.
nitpick_ignore_regex = [("py:class", r"(numpy\.ndarray|os\.PathLike|PathLike|"
                                     r"matplotlib\.figure\.Figure|_core\..*|vczstats\._.*|"
                                     # the package's type aliases (vczstats._args)
                                     r"Regions|SampleList|SampleSets|Pairs|PopPairs|Focal|str|"
                                     r"collections\.abc\.Mapping|pandas\.DataFrame)")]
autodoc_member_order = "bysource"
autodoc_typehints = "description"
