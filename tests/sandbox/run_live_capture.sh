#!/usr/bin/env bash
# run_live_capture.sh SCENARIO_DIR OUTDIR - regenerate a Slurm oracle capture live.
#
# For CI (as root): runs the sandbox's scenario.sh with SCENARIO_DIR's spec.txt,
# jobs.txt and env.txt, but only the variants fair_tree (PriorityFlags unset)
# and classic (NO_FAIR_TREE, FairShareDampeningFactor=1), writing
#   OUTDIR/fair_tree/  OUTDIR/classic/   (sshare_a_l_P.psv, assoc_mgr.txt, ...)
#   OUTDIR/timings.txt OUTDIR/scenario.log
# The scenario wipes the sandbox (down.sh --purge) first. With the tiny
# tests/fixtures/slurm/live scenario it takes about 4 minutes:
#   sudo tests/sandbox/run_live_capture.sh tests/fixtures/slurm/live /tmp/live-capture
#
# Environment:
#   SANDBOX_SCRIPTS  folder with scenario.sh (default: ../shared/slurm-sandbox
#                    next to the repository, else /work/shared/slurm-sandbox)
#   LIVE_TIMEOUT     give up after this many seconds (default 480)
#   SANDBOX_KEEP     0 = stop the sandbox afterwards (default 1: leave it up)
#   SANDBOX_*        passed on to the sandbox scripts (see their README)
# Exit status: 0 on success; 1 with one "run_live_capture: ERROR: ..." line
# on stderr (not root, no sandbox scripts, sandbox did not start, scenario
# failed or timed out, empty capture); 2 on bad arguments.
set -euo pipefail

prog=run_live_capture
fail() { echo "$prog: ERROR: $*" >&2; exit 1; }

if [ $# -ne 2 ]; then
  echo "usage: $0 SCENARIO_DIR OUTDIR" >&2
  exit 2
fi
scen=$1
out=$2

[ "$(id -u)" = 0 ] || fail "must run as root (the Slurm sandbox starts daemons and adds Unix users); try: sudo $0 $scen $out"
[ -r "$scen/spec.txt" ] || fail "no $scen/spec.txt: not a scenario folder"
[ -r "$scen/jobs.txt" ] || fail "no $scen/jobs.txt: not a scenario folder"

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
scripts=${SANDBOX_SCRIPTS:-}
if [ -z "$scripts" ]; then
  for d in "$repo/../shared/slurm-sandbox" /work/shared/slurm-sandbox; do
    if [ -x "$d/scenario.sh" ]; then scripts=$d; break; fi
  done
fi
[ -n "$scripts" ] && [ -x "$scripts/scenario.sh" ] \
  || fail "Slurm sandbox scripts not found (set SANDBOX_SCRIPTS to the folder with scenario.sh)"

# A private copy of the scenario with only the two variants CI needs.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$scen/spec.txt" "$scen/jobs.txt" "$work/"
if [ -r "$scen/env.txt" ]; then cp "$scen/env.txt" "$work/"; fi
printf '%s\n' 'fair_tree - 1' 'classic NO_FAIR_TREE 1' > "$work/variants.txt"

mkdir -p "$out" || fail "cannot create $out"
out=$(cd "$out" && pwd)
log=$out/scenario.log
rm -f "$out/timings.txt"

echo "$prog: scenario $scen -> $out (variants fair_tree, classic; log $log)"
rc=0
timeout "${LIVE_TIMEOUT:-480}" "$scripts/scenario.sh" "$work" "$out" 2>&1 | tee "$log" || rc=$?

if [ "$rc" != 0 ]; then
  # scenario.sh writes the line "up ..." to timings.txt once up.sh succeeded.
  if ! grep -q '^up ' "$out/timings.txt" 2>/dev/null; then
    fail "the Slurm sandbox could not start (exit $rc; see $log and ${SANDBOX_DIR:-/tmp/slurm-sandbox}/log/)"
  fi
  if [ "$rc" = 124 ]; then
    fail "scenario timed out after ${LIVE_TIMEOUT:-480} s (see $log)"
  fi
  fail "scenario.sh failed with exit $rc (see $log)"
fi

for v in fair_tree classic; do
  f=$out/$v/sshare_a_l_P.psv
  [ "$(wc -l < "$f" 2>/dev/null || echo 0)" -gt 2 ] || fail "capture $f is missing or empty"
done
echo "$prog: ok: $out/fair_tree $out/classic"
