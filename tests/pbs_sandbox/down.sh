#!/usr/bin/env bash
# down.sh [--purge] - stop what up.sh started, by the PIDs it recorded (and the datastore's
# postmaster, by its postmaster.pid); --purge also removes PBS_SANDBOX_DIR and the /etc/hosts alias.
set -uo pipefail
SB=${PBS_SANDBOX_DIR:-/var/lib/fairtop-pbs-sandbox}
stop_pid() {  # stop_pid PID NAME: TERM, wait up to 10 s, then KILL; only a process of that name
  local pid=$1 name=$2 t
  [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q "$name" || return 0
  kill -TERM "$pid" 2>/dev/null
  for t in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}
if [ -f "$SB/pids" ]; then
  # server first: it stops its datastore on the way down
  for name in pbs_server pbs_sched pbs_mom pbs_comm; do
    pid=$(awk -v n="$name" '$1 == n {print $2}' "$SB/pids" | tail -1)
    [ -n "$pid" ] && stop_pid "$pid" "$name"
  done
  rm -f "$SB/pids"
fi
pm=$SB/home/datastore/postmaster.pid
if [ -f "$pm" ]; then
  pid=$(head -1 "$pm")
  stop_pid "$pid" postgres
fi
lock=$SB/home/datastore/pbs_dblock  # "host:PID" of the datastore's monitor
[ -f "$lock" ] && stop_pid "$(head -1 "$lock" | sed 's/.*://')" pbs_ds_monitor
if [ "${1:-}" = --purge ]; then
  rm -rf "$SB"
  sed -i '/# fairtop-pbs-sandbox$/d' /etc/hosts
fi
echo "pbs sandbox down"
