#!/usr/bin/env bash
# Build the documentation site (docs/) into build/docs/html with Debian's Sphinx and MyST
# (python3-sphinx, python3-myst-parser: scripts/setup.sh installs them). Warnings are errors
# (-W) and cross-references are nitpicky (-n), so a broken internal link, a missing page or a
# page outside every toctree fails the build; no network is used (external links are not
# checked). The CLI reference is generated from the binary's --help and the Python API from the
# built package (docs/_ext/), so build first: bash scripts/build.sh.
#
#   scripts/docs.sh [OUTDIR]      default OUTDIR: build/docs
# Environment: VCZSTATS_BIN (default build/vczstats), VCZSTATS_PYTHONPATH (default build/python).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/docs}
export VCZSTATS_BIN=${VCZSTATS_BIN:-$PWD/build/vczstats}
export VCZSTATS_PYTHONPATH=${VCZSTATS_PYTHONPATH:-$PWD/build/python}
if ! /usr/bin/python3 -c "import sphinx, myst_parser" 2>/dev/null; then
  # ctest's skip (77), except under CI, where scripts/setup.sh must have installed them
  if [ "${CI:-}" = true ]; then
    echo "docs: error: Sphinx or MyST is missing (scripts/setup.sh: python3-sphinx python3-myst-parser)" >&2
    exit 1
  fi
  echo "skipped: Sphinx or MyST is missing (run scripts/setup.sh: python3-sphinx python3-myst-parser)"
  exit 77
fi
if [ ! -x "$VCZSTATS_BIN" ]; then
  echo "docs: no vczstats binary at $VCZSTATS_BIN (run scripts/build.sh)" >&2
  exit 1
fi
# Sphinx's own HTML build, every page re-read (-E: the generated pages change with the binary).
/usr/bin/python3 -m sphinx -b html -W --keep-going -n -E -q -d "$out/doctrees" docs "$out/html"
echo "docs: built $out/html/index.html" >&2
if grep -q "was not importable" docs/reference/python-api.md; then
  echo "skipped: the Python API page: the package in $VCZSTATS_PYTHONPATH does not import" \
    "(docstrings shown as text; build the vczstats_python target)" >&2
fi
# README.md's links into the site: every docs/ path it names exists (the generated pages too,
# which the build has just written).
missing=0
for f in $(grep -o '](docs/[^)#]*' README.md | cut -c3- | sort -u); do
  [ -e "$f" ] || { echo "docs: error: README.md links to $f, which does not exist" >&2; missing=1; }
done
exit $missing
