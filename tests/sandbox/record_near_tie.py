"""Make a >= 2,000-association Fair Tree capture with near-ties (issue 8, finding 1).

Made tests/fixtures/slurm/near_tie/ (Slurm 22.05.8), in a sandbox of its own::

    export SANDBOX_DIR=/tmp/sb-tie SANDBOX_CLUSTER=tie SANDBOX_NODE=tie-node SANDBOX_CTLD_PORT=6917 \
      SANDBOX_SLURMD_PORT=6918 SANDBOX_DBD_PORT=6919 SANDBOX_DB_PORT=13316 SANDBOX_RESTD=0 SANDBOX_CPUS=16
    export SLURM_CONF=$SANDBOX_DIR/etc/slurm.conf
    ../shared/slurm-sandbox/up.sh
    python tests/sandbox/record_near_tie.py tests/fixtures/slurm/near_tie
    ../shared/slurm-sandbox/down.sh --purge

The tree (spec.txt, written here): root -> div00..div09 (shares 10..19) -> g0..g3 (shares 1..4)
-> 50 users each, and in four divisions a pair of sibling accounts tie<d>a (shares 1) and tie<d>b
(shares 3). tie<d>a's user runs 1 CPU and tie<d>b's two users 2 + 1 CPUs, all four jobs held,
released by one ``scontrol release`` and ended by their common 1-minute time limit, so their
start and end seconds agree: tie<d>b's usage is 3x tie<d>a's but for slurmctld's long double
rounding. Their LevelFS print equal, ``scontrol show assoc_mgr``'s 2-decimal UsageRaw cannot say
which is larger, and slurmctld's own order is visible only in sshare's FairShare. Background jobs
(jobs.txt) give the other groups usage first. Then one decay cycle and capture.sh into OUT.
"""
import os
import random
import subprocess
import sys
import time
from pathlib import Path

S = Path("/work/shared/slurm-sandbox")
TIE_DIVS = (1, 3, 5, 8)


def sh(*cmd: str) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def spec_lines() -> list[str]:
    lines = []
    for d in range(10):
        div = f"div{d:02d}"
        lines.append(f"account root {div} {10 + d}")
        for g in range(4):
            grp = f"{div}g{g}"
            lines.append(f"account {div} {grp} {g + 1}")
            for u in range(50):
                lines.append(f"user {grp} u{d:02d}{g}{u:02d} {1 + (u % 3)}")
        if d in TIE_DIVS:
            lines.append(f"account {div} tie{d}a 1")
            lines.append(f"account {div} tie{d}b 3")
            lines += [f"user tie{d}a ta{d}x 1", f"user tie{d}a ta{d}y 1"]
            lines += [f"user tie{d}b tb{d}x 2", f"user tie{d}b tb{d}y 1", f"user tie{d}b tb{d}z 1"]
    return lines


def background_jobs() -> list[tuple[str, str, int, int]]:
    rng = random.Random(8)
    jobs = []
    for d in range(10):
        for g in range(4):
            for u in rng.sample(range(50), 3):
                jobs.append((f"u{d:02d}{g}{u:02d}", f"div{d:02d}g{g}", rng.randint(1, 4), rng.randint(1, 4)))
    return jobs


def sbatch_held(user: str, acct: str, cpus: int) -> str:
    out = sh("runuser", "-u", user, "--", "sbatch", "--parsable", "--hold", "-A", acct, "-p", "burn",
             "-N", "1", "-n", "1", "-c", str(cpus), "-J", f"tie-{user}", "-t", "1", "--chdir=/tmp",
             "-o", "/dev/null", "-e", "/dev/null", "--wrap", "sleep 600")
    return out.strip()


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "spec.txt").write_text("\n".join(spec_lines()) + "\n")
    jobs = background_jobs()
    (out / "jobs.txt").write_text("".join(f"{u} {a} {c} {s}\n" for u, a, c, s in jobs))
    t = time.time()
    print(sh(str(S / "tree.sh"), "--bulk", str(out / "spec.txt")), flush=True)
    print(f"tree {time.time() - t:.0f} s", flush=True)
    for u, a, c, s in jobs:
        sh(str(S / "usage.sh"), u, a, str(c), str(s))
    print(sh(str(S / "usage.sh"), "--wait", "0"), flush=True)
    held = []
    for d in TIE_DIVS:
        held += [sbatch_held(f"ta{d}x", f"tie{d}a", 1),
                 sbatch_held(f"tb{d}x", f"tie{d}b", 2), sbatch_held(f"tb{d}y", f"tie{d}b", 1)]
    sh("scontrol", "release", ",".join(held))
    print("released", held, flush=True)
    print(sh(str(S / "usage.sh"), "--wait", "1"), flush=True)
    env = dict(os.environ, SLURM_TIME_FORMAT="%s")
    sacct = ["sacct", "-j", ",".join(held), "-X", "-n", "-P", "-o", "JobID,User,Start,End,AllocCPUS,State"]
    print(subprocess.run(sacct, capture_output=True, text=True, env=env, check=True).stdout, flush=True)
    sh(str(S / "capture.sh"), str(out / "fair_tree"))
    print(f"captured in {time.time() - t:.0f} s", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
