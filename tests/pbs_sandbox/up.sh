#!/usr/bin/env bash
# up.sh - a one-node OpenPBS on this machine for fairtop's tests: pbs_server (its PostgreSQL
# datastore), pbs_sched with fairshare on, pbs_mom and pbs_comm, started by PID. As root; OpenPBS
# built by ../../../shared/pbs-sandbox/build.sh (CI: .ci/pbs.sh). Prints "pbs sandbox up" last.
#
#   tests/pbs_sandbox/up.sh [RESOURCE_GROUP_FILE]
#
# Environment: PBS_SANDBOX_DIR (default /var/lib/fairtop-pbs-sandbox: PBS refuses a PBS_HOME under a
# world-writable directory such as /tmp), PBS_SANDBOX_DECAY (fairshare_decay_time, default 00:00:20),
# PBS_PREFIX (default /opt/openpbs). Users pbsu1..pbsu4 are created if missing. The server host is the
# alias fairtop-pbs for this machine's first non-loopback IPv4 (an /etc/hosts line marked
# "# fairtop-pbs-sandbox"): OpenPBS's comm layer does not run on a loopback address.
# Environment for the PBS commands afterwards: PBS_CONF_FILE=$PBS_SANDBOX_DIR/pbs.conf, PATH=$PBS_PREFIX/bin.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SB=${PBS_SANDBOX_DIR:-/var/lib/fairtop-pbs-sandbox}
PREFIX=${PBS_PREFIX:-/opt/openpbs}
DECAY=${PBS_SANDBOX_DECAY:-00:00:20}
HOST=fairtop-pbs
USERS=(pbsu1 pbsu2 pbsu3 pbsu4)
say() { printf '[pbs-sandbox %s] %s\n' "$(date +%T)" "$*"; }
die() { say "ERROR: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (pbs_server, pbs_mom and the datastore need it)"
[ -x "$PREFIX/sbin/pbs_server" ] || die "no OpenPBS in $PREFIX: run ../shared/pbs-sandbox/build.sh first"
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  say "installing postgresql (the server's datastore)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null; }
fi
PGDIR=$(ls -d /usr/lib/postgresql/*/ | sort -V | tail -1)
"$here/down.sh" >/dev/null 2>&1 || true  # a sandbox left running by an earlier call

ip=$(ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')
[ -n "$ip" ] || ip=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -v '^127\.' | grep -m1 '\.' || true)
[ -n "$ip" ] || die "no non-loopback IPv4 address on this machine (OpenPBS's comm layer needs one)"
sed -i '/# fairtop-pbs-sandbox$/d' /etc/hosts
echo "$ip $HOST # fairtop-pbs-sandbox" >> /etc/hosts

mkdir -p "$SB" && chmod 755 "$SB"
cat > "$SB/pbs.conf" <<CONF
PBS_SERVER=$HOST
PBS_START_SERVER=1
PBS_START_SCHED=1
PBS_START_COMM=1
PBS_START_MOM=1
PBS_EXEC=$PREFIX
PBS_HOME=$SB/home
PBS_CORE_LIMIT=unlimited
PBS_SCP=/usr/bin/scp
PBS_MOM_NODE_NAME=$HOST
PBS_LEAF_NAME=$HOST
CONF
export PBS_CONF_FILE=$SB/pbs.conf
if [ ! -d "$SB/home/datastore" ]; then
  say "pbs_habitat: PBS_HOME and the datastore in $SB/home"
  PGSQL_INST_DIR=${PGDIR%/} "$PREFIX/libexec/pbs_habitat" > "$SB/habitat.log" 2>&1 \
    || { tail -20 "$SB/habitat.log"; die "pbs_habitat failed (log: $SB/habitat.log)"; }
fi
# qsub as a plain user authenticates through these two (an installed PBS sets them setuid root)
chmod 4755 "$PREFIX/sbin/pbs_iff" "$PREFIX/sbin/pbs_rcp"
for u in "${USERS[@]}"; do id "$u" >/dev/null 2>&1 || useradd -m -s /bin/bash "$u"; done

H=$SB/home
# resources_used reported every 1-2 s: the scheduler adds usage from it at each cycle
printf '$clienthost %s\n$usecp *:/ /\n$min_check_poll 1\n$max_check_poll 2\n' "$HOST" > "$H/mom_priv/config"
cfg=$H/sched_priv/sched_config
sed -i -e 's/^fair_share:.*/fair_share: true\tALL/' \
       -e 's/^fairshare_usage_res:.*/fairshare_usage_res: ncpus*walltime/' \
       -e "s/^fairshare_decay_time:.*/fairshare_decay_time: $DECAY/" \
       -e 's/^fairshare_decay_factor:.*/fairshare_decay_factor: 0.5/' "$cfg"
if [ $# -ge 1 ]; then
  cp "$1" "$H/sched_priv/resource_group"
else
  cat > "$H/sched_priv/resource_group" <<RG
physics 100 root 60
chem    200 root 40
pbsu1   1001 physics 30
pbsu2   1002 physics 10
pbsu3   1003 chem 20
pbsu4   1004 chem 20
RG
fi

start() {  # start NAME LOCKFILE: run the daemon (it forks), then wait for its lock file's PID
  local name=$1 lock=$2 t
  rm -f "$lock"
  "$PREFIX/sbin/$name" >> "$SB/daemons.log" 2>&1 || die "$name did not start (see $SB/daemons.log, $H/*_logs)"
  for t in $(seq 1 100); do
    if [ -s "$lock" ] && kill -0 "$(head -1 "$lock")" 2>/dev/null; then
      echo "$name $(head -1 "$lock")" >> "$SB/pids"; return 0
    fi
    sleep 0.1
  done
  die "$name wrote no PID to $lock"
}
t0=$SECONDS
: > "$SB/pids"
start pbs_comm "$H/server_priv/comm.lock"
start pbs_mom "$H/mom_priv/mom.lock"
start pbs_server "$H/server_priv/server.lock"
start pbs_sched "$H/sched_priv/sched.lock"
Q=("$PREFIX/bin/qmgr" -c)
"${Q[@]}" "set server scheduler_iteration = 10"
"${Q[@]}" "set server job_history_enable = True"
"${Q[@]}" "set server flatuid = True"
"${Q[@]}" "create node $HOST" >/dev/null 2>&1 || true
for t in $(seq 1 150); do
  "$PREFIX/bin/pbsnodes" "$HOST" 2>/dev/null | grep -q 'state = free' && break
  sleep 0.2
done
"$PREFIX/bin/pbsnodes" "$HOST" | grep -q 'state = free' || die "node $HOST is not free: $("$PREFIX/bin/pbsnodes" "$HOST" 2>&1 | grep state)"
say "daemons up in $((SECONDS - t0)) s: $(tr '\n' ' ' < "$SB/pids")"
echo "pbs sandbox up (PBS_CONF_FILE=$SB/pbs.conf)"
