#!/usr/bin/env bash
# Compare the simulator's random-exploration speed at two commits on one
# core: build each commit's internal/sim test binary, run the Random
# benchmarks alternately ROUNDS times (default 6), print the best run of
# each (the best is the steadiest figure on a host whose hypervisor steals
# CPU time).
#
#   bash bench/simulate/ab.sh 7775d34 HEAD
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-6}
[ $# -eq 2 ] || { echo "usage: $0 OLD-COMMIT NEW-COMMIT" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/wt" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
for rev in "$1" "$2"; do
  git worktree add --detach "$tmp/wt" "$rev" >/dev/null 2>&1
  (cd "$tmp/wt" && go test -c -o "$tmp/$rev.test" ./internal/sim)
  git worktree remove --force "$tmp/wt"
done
for i in $(seq 1 "$ROUNDS"); do
  for rev in "$1" "$2"; do
    GOMAXPROCS=1 "$tmp/$rev.test" -test.run XXX -test.bench Random -test.benchtime 1s |
      awk -v rev="$rev" '/schedules\/s/ { for (i = 1; i < NF; i++) if ($(i + 1) == "schedules/s") print rev, $1, $i }'
  done
done | awk '{ k = $1 " " $2; if ($3 > best[k]) best[k] = $3 } END { for (k in best) printf "%s %.0f schedules/s\n", k, best[k] }' | sort
