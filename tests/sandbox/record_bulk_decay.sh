#!/usr/bin/env bash
# record_bulk_decay.sh OUTDIR - a 2,040-association tree over several decay cycles, captured by
# `fairtop capture` itself (so the capture path of the release is exercised too).
#
# Made tests/fixtures/slurm-26.05/bulk_decay/ (2026-11-24, Slurm 26.05.3) with its own sandbox:
#   SANDBOX_SLURM=/opt/slurm-26.05.3 SANDBOX_DIR=/tmp/sbx-lead-2605r SANDBOX_CTLD_PORT=7967 \
#   SANDBOX_SLURMD_PORT=7968 SANDBOX_DBD_PORT=7969 SANDBOX_DB_PORT=14406 \
#     tests/sandbox/record_bulk_decay.sh tests/fixtures/slurm-26.05/bulk_decay
# Steps: a fresh sandbox with a 10-minute half-life (SANDBOX_DECAY=0:10:00) and 16 CPUs, the tree of
# OUTDIR/spec.txt in one `tree.sh --bulk`, the jobs of OUTDIR/jobs.txt (USER ACCOUNT CPUS SECONDS),
# the queue drained, then one `fairtop capture OUTDIR/cycleK` right after each of CYCLES (4)
# priority cycles (PriorityCalcPeriod is 1 minute). Each capture keeps what the engine reads.
set -euo pipefail
out=$(cd "${1:?usage: record_bulk_decay.sh OUTDIR}" && pwd)
S=${FAIRTOP_SANDBOX_SCRIPTS:-/work/shared/slurm-sandbox}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export SANDBOX_DECAY=${SANDBOX_DECAY:-0:10:00} SANDBOX_CPUS=${SANDBOX_CPUS:-16}
"$S/down.sh" --purge >/dev/null 2>&1 || true
"$S/up.sh" >/dev/null
. "$SANDBOX_DIR/env.sh"
"$S/tree.sh" --bulk "$out/spec.txt"
while read -r u a c s _; do
  case "$u" in ''|\#*) continue;; esac
  "$S/usage.sh" "$u" "$a" "$c" "$s" >/dev/null </dev/null
done < "$out/jobs.txt"
"$S/usage.sh" --wait 1
stamp=$SANDBOX_DIR/state/ctld/priority_last_decay_ran
for k in $(seq 1 "${CYCLES:-4}"); do
  seen=$(stat -c %Y "$stamp")
  while [ "$(stat -c %Y "$stamp")" = "$seen" ]; do sleep 0.5; done
  rm -rf "$out/cycle$k"
  "${PYTHON:-$root/.venv/bin/python}" -m tui.cli capture "$out/cycle$k" >/dev/null
  # what the engine and the loader read; the rest is the capture path's own check
  (cd "$out/cycle$k" && rm -f sacct.json* squeue.json* sacct_a_P*.psv sprio_*.txt sacctmgr_*.psv* *.err)
  echo "cycle $k captured"
done
