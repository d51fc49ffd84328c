"""Record Slurm's usage accrual and decay on the sandbox: cycle times and UsageRaw.

Made tests/fixtures/slurm/decay_1h/record.json (2026-11-22, Slurm 22.05.8), in a sandbox of its
own (so as not to meet another one on the default ports)::

    export SANDBOX_DIR=/tmp/plan-sandbox SANDBOX_CTLD_PORT=9817 SANDBOX_SLURMD_PORT=9818 \
      SANDBOX_DBD_PORT=9819 SANDBOX_DB_PORT=15306 SANDBOX_RESTD=0 SANDBOX_DECAY=1:00:00 \
      SANDBOX_CPUS=4 SANDBOX_CLUSTER=plansbx SANDBOX_NODE=plansbx-node
    export SLURM_CONF=$SANDBOX_DIR/etc/slurm.conf
    ../shared/slurm-sandbox/up.sh && ../shared/slurm-sandbox/tree.sh tests/fixtures/slurm/decay_1h/spec.txt
    python tests/sandbox/record_decay.py 420 && ../shared/slurm-sandbox/down.sh --purge

After a decay cycle it submits a 2-CPU 230 s job for pdu1 and, 20 s later, a 1-CPU 100 s job for
pdu2 (partition burn: 1,000,000 billing per CPU-second), then after every cycle (the mtime of
slurmctld's priority_last_decay_ran) records ``scontrol show assoc_mgr`` UsageRaw and sshare
RawUsage; at the end the jobs' Start and End from sacct (epoch seconds). Writes record.json here.
"""
import json
import os
import re
import subprocess
import sys
import time

S = "/work/shared/slurm-sandbox"
state = "/tmp/plan-sandbox/state/ctld/priority_last_decay_ran"
env = dict(os.environ)

def sh(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout

def last_decay():
    try:
        return os.stat(state).st_mtime
    except FileNotFoundError:
        return None

def usage():
    out = sh("scontrol", "show", "assoc_mgr", "flags=assoc")
    got = {}
    for block in out.split("ClusterName=")[1:]:
        acct = re.search(r"Account=(\S+)", block).group(1)
        user = re.search(r"UserName=(\S*)", block).group(1)
        raw = re.search(r"UsageRaw/Norm/Efctv=([0-9.]+)/", block).group(1)
        got[f"{acct}/{user.split('(')[0]}"] = raw
    return got

def sshare():
    out = sh("sshare", "-a", "-P", "-o", "Account,User,RawUsage")
    rows = [line.split("|") for line in out.splitlines()[1:]]
    return {f"{r[0].strip()}/{r[1]}": r[2] for r in rows}

samples = []
# Wait for a cycle, then submit.
t0 = last_decay()
while last_decay() == t0:
    time.sleep(0.2)
jobs = {}
jobs["pdu1"] = sh(f"{S}/usage.sh", "pdu1", "pdecay", "2", "230").split()[-1]
time.sleep(20)
jobs["pdu2"] = sh(f"{S}/usage.sh", "pdu2", "pdecay", "1", "100").split()[-1]
seen = last_decay()
end = time.time() + float(sys.argv[1])
while time.time() < end:
    now = last_decay()
    if now != seen:
        time.sleep(0.3)
        samples.append({"cycle_mtime": now, "assoc_mgr": usage(), "sshare": sshare()})
        seen = now
        print(len(samples), now, samples[-1]["assoc_mgr"], flush=True)
    time.sleep(0.2)
env["SLURM_TIME_FORMAT"] = "%s"
acct = {}
for u, j in jobs.items():
    line = sh("sacct", "-j", j, "-X", "-n", "-P", "-o", "JobID,Start,End,AllocCPUS,State").strip()
    acct[u] = line
json.dump({"jobs": jobs, "sacct": acct, "samples": samples}, open("record.json", "w"), indent=1)
print(acct)
