#!/usr/bin/env bash
# Runs a command (default: npm test) and samples, once a second, the resident memory (VmRSS) of its whole process
# tree (threads not double counted): prints the peak of the sum and of the largest single process, and the wall time.
# Used for README "Development" (npm test's memory). Usage: scripts/measure-memory.sh [command…]
set -uo pipefail
[ $# -gt 0 ] || set -- npm test
started=$(date +%s)
"$@" &
pid=$!
peak=0
peak_one=0
while kill -0 "$pid" 2>/dev/null; do
  sum=0
  one=0
  for p in $(pstree -pT "$pid" 2>/dev/null | grep -o '([0-9]\+)' | tr -d '()'); do
    kb=$(awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null)
    kb=${kb:-0}
    sum=$((sum + kb))
    [ "$kb" -gt "$one" ] && one=$kb
  done
  [ "$sum" -gt "$peak" ] && peak=$sum
  [ "$one" -gt "$peak_one" ] && peak_one=$one
  sleep 1
done
wait "$pid"
rc=$?
echo "measure-memory: exit $rc, $(($(date +%s) - started)) s, peak RSS $((peak / 1024)) MB in all, largest process $((peak_one / 1024)) MB" >&2
exit $rc
