#!/usr/bin/env bash
# Runs a command (default: npm test) and samples, once a second, the resident memory (VmRSS) of its whole process
# tree (threads not double counted): prints the peak of the sum and of the largest single process, and the wall time.
# The sum of RSS counts pages shared between processes (the node binary, Chromium's shared memory) once per process;
# the sum of PSS (proportional set size, /proc/<pid>/smaps_rollup) divides each shared page among its sharers, so it
# is the tree's actual footprint. Both are printed.
# Used for README "Development" (npm test's memory). Usage: scripts/measure-memory.sh [command…]
set -uo pipefail
[ $# -gt 0 ] || set -- npm test
started=$(date +%s)
"$@" &
pid=$!
peak=0
peak_one=0
peak_pss=0
while kill -0 "$pid" 2>/dev/null; do
  sum=0
  one=0
  pss=0
  for p in $(pstree -pT "$pid" 2>/dev/null | grep -o '([0-9]\+)' | tr -d '()'); do
    kb=$(awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null)
    kb=${kb:-0}
    sum=$((sum + kb))
    pk=$(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null)
    pss=$((pss + ${pk:-0}))
    [ "$kb" -gt "$one" ] && one=$kb
  done
  [ "$sum" -gt "$peak" ] && peak=$sum
  [ "$pss" -gt "$peak_pss" ] && peak_pss=$pss
  [ "$one" -gt "$peak_one" ] && peak_one=$one
  sleep 1
done
wait "$pid"
rc=$?
echo "measure-memory: exit $rc, $(($(date +%s) - started)) s, peak RSS $((peak / 1024)) MB in all (PSS $((peak_pss / 1024)) MB), largest process $((peak_one / 1024)) MB" >&2
exit $rc
