#!/usr/bin/env bash
# LibraryExample.AcrossMpiRanks: examples/library_mpi alone and under mpirun -n 3 gives the same
# bytes, rank 0 alone prints, a store that does not open fails on every rank with one report, and
# the table is the CLI's (`vczstats stats ... --stats pi,theta_w,tajima_d`, through the library's
# TableWriter), byte for byte.
# Usage: library_mpi_example.sh PROGRAM STORE mpi|nompi [VCZSTATS]
set -uo pipefail
program=$1 store=$2 built=$3 cli=${4:-}
if [ "$built" != mpi ]; then echo "skipped: the library was built without MPI"; exit 0; fi
if ! command -v mpirun >/dev/null; then
  [ "${CI:-}" = true ] && { echo "FAILED: mpirun is not installed (scripts/setup.sh)"; exit 1; }
  echo "skipped: mpirun is not installed (openmpi-bin; run scripts/setup.sh)"; exit 0
fi
if [ ! -e "$store" ]; then echo "skipped: ../shared/data is absent"; exit 0; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpirun=(mpirun --allow-run-as-root --oversubscribe -n 3)
"$program" "$store" 50000 >"$work/one" 2>"$work/one.err" || { echo "FAILED: alone"; cat "$work/one.err"; exit 1; }
"${mpirun[@]}" "$program" "$store" 50000 >"$work/many" 2>"$work/many.err" ||
  { echo "FAILED: mpirun -n 3"; cat "$work/many.err"; exit 1; }
rows=$(wc -l <"$work/one")
[ "$rows" -gt 10 ] || { echo "FAILED: only $rows lines alone"; exit 1; }
cmp -s "$work/one" "$work/many" || { echo "FAILED: the outputs differ"; diff "$work/one" "$work/many" | head; exit 1; }
if [ -n "$cli" ]; then
  "$cli" stats "$store" --stats pi,theta_w,tajima_d --window-size 50000 -o "$work/cli" 2>"$work/cli.err" ||
    { echo "FAILED: the CLI"; cat "$work/cli.err"; exit 1; }
  cmp -s "$work/one" "$work/cli" || { echo "FAILED: the table is not the CLI's"; diff "$work/one" "$work/cli" | head; exit 1; }
fi
grep -q "3 process(es)" "$work/many.err" || { echo "FAILED: not 3 processes"; cat "$work/many.err"; exit 1; }
[ "$(grep -c "process(es)" "$work/many.err")" = 1 ] || { echo "FAILED: more than one rank printed"; exit 1; }
# A store that does not open: every rank fails, the exit code is 1, the message printed once.
"${mpirun[@]}" "$program" "$work/absent.vcz" >"$work/bad" 2>"$work/bad.err"
code=$?
[ "$code" -ne 0 ] || { echo "FAILED: exit code 0 for a missing store"; exit 1; }
[ "$(grep -c "absent.vcz" "$work/bad.err")" = 1 ] ||
  { echo "FAILED: the error is not reported once"; cat "$work/bad.err"; exit 1; }
same_as_cli=""
[ -n "$cli" ] && same_as_cli=", the bytes of vczstats stats"
echo "library_mpi: same output alone and across 3 ranks ($rows lines$same_as_cli); a missing store: exit $code, one report"
