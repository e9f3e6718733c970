#!/usr/bin/env bash
# afdist on a store read from local disk against the same store served by Debian's nginx on the
# loopback address (a directory store, and the zip read with range requests), with 8, 32, 128
# and 256 (the default) HTTP requests in flight. Prints the median wall time of N runs (after one
# warm-up run each), genotype calls per second, and the ratio to local disk of the same layout;
# checks that every configuration prints the same afdist table.
#
#   bash bench/remote.sh [-n RUNS] [-t THREADS] [-s STORE.zip] [-L MS [-O STAT] [-X OPTIONS]]
#   bash bench/remote.sh -R [-n PAIRS] [-t THREADS] [-s STORE.zip] [-O STAT] [-X OPTIONS]
#
# With -L MS every request is answered MS milliseconds late (an object store's round trip): by
# nginx with the echo module's echo_sleep (libnginx-mod-http-echo, thousands of requests a
# second), else by tests/tools/fault_server.py (Python, about 400 requests a second: it then
# bounds directory stores' times). Every statistic (afdist, freq, missing, hardy, stats, sfs,
# diversity) runs once on each layout: wall time, requests, and the check that the table equals
# the local one. -O STAT runs only the statistics whose command is STAT (e.g. stats); -X OPTIONS
# are added to the remote runs (e.g. "--max-requests 256").
#
# With -R (no latency): STAT (default stats, as below) on local disk and through plain nginx,
# interleaved, RUNS pairs per layout after a warm-up pair; prints each layout's median of the
# per-pair ratios remote / local (the issue's "<= 1.2x local" check).
#
# Defaults: 5 runs, all cores, the Ag1000G store of ../shared/data. Needs nginx (scripts/setup.sh)
# and a build in build/ (VCZSTATS=path/to/vczstats to use another).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=5
threads=""
store=../shared/data/ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip
latency=""
only=""
extra_remote=""
ratio=""
while getopts "n:t:s:L:O:X:R" opt; do
  case $opt in
    n) runs=$OPTARG ;;
    t) threads="-t $OPTARG" ;;
    s) store=$OPTARG ;;
    L) latency=$OPTARG ;;
    O) only=$OPTARG ;;
    X) extra_remote=$OPTARG ;;
    R) ratio=1 ;;
    *) echo "usage: $0 [-n RUNS] [-t THREADS] [-s STORE.zip] [-L MS | -R] [-O STAT] [-X OPTIONS]" >&2; exit 2 ;;
  esac
done
vczstats=${VCZSTATS:-build/vczstats}
[ -x "$vczstats" ] || { echo "remote.sh: $vczstats not found (build first)" >&2; exit 1; }
[ -f "$store" ] || { echo "remote.sh: $store not found" >&2; exit 1; }
command -v nginx >/dev/null || { echo "remote.sh: nginx not found (run scripts/setup.sh)" >&2; exit 1; }

tmp=$(mktemp -d)
nginx_pid=""
cleanup() {
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

www=$tmp/www
mkdir -p "$www/store.vcz"
cp "$store" "$www/store.vcz.zip"
/usr/bin/python3 - "$www/store.vcz.zip" "$www/store.vcz" <<'EOF'
import os, shutil, sys, zipfile
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
# A store zipped with its folder: move the folder's content up.
entries = os.listdir(sys.argv[2])
if len(entries) == 1 and os.path.isdir(os.path.join(sys.argv[2], entries[0])):
    inner = os.path.join(sys.argv[2], entries[0])
    for e in os.listdir(inner):
        shutil.move(os.path.join(inner, e), sys.argv[2])
    os.rmdir(inner)
EOF
# nginx on a free loopback port serving $www: start_nginx MODULES SERVER_BODY (sets nginx_pid, url)
start_nginx() {
  local port user=""
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  [ "$(id -u)" -eq 0 ] && user="user root root;"
  cat >"$tmp/nginx.conf" <<EOF
$1
worker_processes 2;
$user
pid $tmp/nginx.pid;
error_log $tmp/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $tmp; proxy_temp_path $tmp; fastcgi_temp_path $tmp;
  uwsgi_temp_path $tmp; scgi_temp_path $tmp;
  keepalive_requests 1000000;
  sendfile on; tcp_nopush on;
  types { } default_type application/octet-stream;
  server {
    listen 127.0.0.1:$port;
    $2
  }
}
EOF
  nginx -e "$tmp/error.log" -p "$tmp" -c "$tmp/nginx.conf" -g "daemon off;" &
  nginx_pid=$!
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.05
  done
  url=http://127.0.0.1:$port
}

# Two populations, samples dealt alternately: write_pops FILE
write_pops() {
  /usr/bin/python3 -c '
import sys, zarr
g = zarr.open_group(sys.argv[1], mode="r")
for i, s in enumerate(g["sample_id"][:]):
    print(s, "ab"[i % 2])' "$www/store.vcz" >"$1"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

if [ -n "$ratio" ]; then
  start_nginx "" "root $www;"
  write_pops "$tmp/pops"
  case ${only:-stats} in
    stats) args="--stats pi,theta_w,tajima_d,dxy,fst_hudson -P $tmp/pops" ;;
    freq | missing | sfs | diversity) args="-P $tmp/pops" ;;
    *) args="" ;;
  esac
  st=${only:-stats}
  echo "$st $args on $(basename "$store"): $runs interleaved local/remote pairs per layout, nginx on 127.0.0.1"
  printf "%-4s %9s %9s %22s\n" kind "local s" "remote s" "median remote/local"
  for kind in zip dir; do
    if [ $kind = zip ]; then l=$www/store.vcz.zip; r=$url/store.vcz.zip; else l=$www/store.vcz; r=$url/store.vcz; fi
    lt=(); rt=(); ratios=()
    for i in $(seq 0 "$runs"); do
      t0=$(date +%s.%N)
      # shellcheck disable=SC2086
      "$vczstats" $st "$l" $args $threads --no-progress >"$tmp/local.tsv"
      t1=$(date +%s.%N)
      # shellcheck disable=SC2086
      "$vczstats" $st "$r" $args $threads $extra_remote --no-progress >"$tmp/remote.tsv"
      t2=$(date +%s.%N)
      cmp -s "$tmp/local.tsv" "$tmp/remote.tsv" || { echo "remote.sh: $st ($kind) differs from local" >&2; exit 1; }
      [ "$i" -eq 0 ] && continue  # warm-up pair
      lt+=("$(echo "$t1 - $t0" | bc -l)")
      rt+=("$(echo "$t2 - $t1" | bc -l)")
      ratios+=("$(echo "($t2 - $t1) / ($t1 - $t0)" | bc -l)")
    done
    printf "%-4s %9.3f %9.3f %21.2fx\n" $kind "$(printf "%s\n" "${lt[@]}" | median)" \
      "$(printf "%s\n" "${rt[@]}" | median)" "$(printf "%s\n" "${ratios[@]}" | median)"
  done
  exit 0
fi

if [ -n "$latency" ]; then
  # Every statistic against a server that answers each request $latency ms late.
  echo_module=/usr/lib/nginx/modules/ngx_http_echo_module.so
  if [ -f $echo_module ]; then
    server="nginx (echo_sleep)"
    start_nginx "load_module $echo_module;" "location / { echo_sleep $(printf "%.3f" "$(echo "$latency / 1000" | bc -l)"); echo_exec @file; }
    location @file { root $www; }"
  else
    server="fault_server.py"
    /usr/bin/python3 tests/tools/fault_server.py --root "$www" --latency "$(echo "$latency / 1000" | bc -l)" \
      --lifetime 3600 >"$tmp/port" 2>"$tmp/server.err" &
    nginx_pid=$!
    for _ in $(seq 100); do grep -q PORT "$tmp/port" 2>/dev/null && break; sleep 0.05; done
    url=http://127.0.0.1:$(awk '/PORT/ {print $2}' "$tmp/port")
  fi
  write_pops "$tmp/pops"
  P="-P $tmp/pops"
  stats=("afdist" "freq $P" "missing $P" "hardy" "stats --stats pi,theta_w,tajima_d,dxy,fst_hudson $P"
         "sfs $P --folded" "diversity $P --window-variants 10000")
  echo "every statistic on $(basename "$store"), $server on 127.0.0.1 answering ${latency} ms late"
  printf "%-62s %-4s %9s %9s %9s\n" statistic kind "local s" "remote s" requests
  for st in "${stats[@]}"; do
    cmd=${st%% *}; rest=""; [ "$cmd" != "$st" ] && rest=${st#* }
    [ -n "$only" ] && [ "$cmd" != "$only" ] && continue
    for kind in zip dir; do
      if [ $kind = zip ]; then l=$www/store.vcz.zip; r=$url/store.vcz.zip; else l=$www/store.vcz; r=$url/store.vcz; fi
      t0=$(date +%s.%N)
      # shellcheck disable=SC2086
      "$vczstats" $cmd "$l" $rest $threads --no-progress >"$tmp/local.tsv"
      t1=$(date +%s.%N)
      # shellcheck disable=SC2086
      "$vczstats" $cmd "$r" $rest $threads $extra_remote --no-progress -v >"$tmp/remote.tsv" 2>"$tmp/err"
      t2=$(date +%s.%N)
      cmp -s "$tmp/local.tsv" "$tmp/remote.tsv" || { echo "remote.sh: $st ($kind) differs from local" >&2; exit 1; }
      requests=$(grep -o "in [0-9]* requests" "$tmp/err" | awk '{print $2}')
      printf "%-62s %-4s %9.2f %9.2f %9s\n" "$st" $kind "$(echo "$t1 - $t0" | bc -l)" "$(echo "$t2 - $t1" | bc -l)" "${requests:--}"
    done
  done
  exit 0
fi

start_nginx "" "root $www; autoindex on;"

calls=$("$vczstats" info --format json "$store" | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
print(j["samples"] * j["variants"] * j["ploidy"])')

# name | layout | store argument | extra options
configs=(
  "local disk|dir|$www/store.vcz|"
  "nginx, 8 requests|dir|$url/store.vcz|--max-requests 8"
  "nginx, 32 requests|dir|$url/store.vcz|--max-requests 32"
  "nginx, 128 requests|dir|$url/store.vcz|--max-requests 128"
  "nginx, 256 requests (default)|dir|$url/store.vcz|"
  "local disk|zip|$www/store.vcz.zip|"
  "nginx, range requests|zip|$url/store.vcz.zip|"
)

echo "afdist on $(basename "$store"): $calls genotype calls; $runs runs each (median), nginx on 127.0.0.1"
printf "%-30s %-4s %9s %12s %10s  %s\n" configuration kind "wall s" "Mcalls/s" "vs local" "fetched (last run)"
declare -A local_time
reference=""
for c in "${configs[@]}"; do
  IFS='|' read -r name kind arg extra <<<"$c"
  # shellcheck disable=SC2086
  "$vczstats" afdist "$arg" $threads $extra --no-progress >"$tmp/out.tsv"  # warm-up
  if [ -z "$reference" ]; then
    reference=$tmp/reference.tsv
    cp "$tmp/out.tsv" "$reference"
  elif ! cmp -s "$tmp/out.tsv" "$reference"; then
    echo "remote.sh: $name ($kind) printed a different table" >&2
    exit 1
  fi
  times=()
  for _ in $(seq "$runs"); do
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$vczstats" afdist "$arg" $threads $extra --no-progress -v >/dev/null 2>"$tmp/err"
    t1=$(date +%s.%N)
    times+=("$(echo "$t1 - $t0" | bc -l)")
  done
  wall=$(printf "%s\n" "${times[@]}" | median)
  [ "$name" = "local disk" ] && local_time[$kind]=$wall
  fetched=$(grep -o "remote .*" "$tmp/err" | sed 's/ *$//' | sed 's/^remote *//' || true)
  printf "%-30s %-4s %9.3f %12.1f %9.2fx  %s\n" "$name" "$kind" "$wall" \
    "$(echo "$calls / $wall / 1000000" | bc -l)" "$(echo "$wall / ${local_time[$kind]}" | bc -l)" \
    "${fetched:--}"
done
