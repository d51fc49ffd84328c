"""What the allocation hook costs a submission: ``sbatch --wrap true`` timed as the user, on the
sandbox of a Slurm release, without the hook and with it in each of its ways.

    FAIRTOP_SANDBOX=1 .venv/bin/python bench/submit_hook.py [--release 22.05|26.05] [-n 30]

Rows: no hook (CliFilterPlugins unset); the filter reading published balances (service up: a
fresh file); the filter with a stale file (service down: no opinion); the filter starting
``fairtop allocations hook submit`` (no file; service up, then down). Jobs go to the sandbox's DOWN
partition ``parked`` (they never start: no prolog, no debit) and are cancelled afterwards. Whole
process times of ``runuser -u USER -- sbatch`` (runuser's own cost is in every row); "added" is the
row's median and p99 minus the no-hook row's median. Needs root and the sandbox
(tests/sandbox/_sandbox.py: the default 22.05 one, or FAIRTOP_SANDBOX_2605 for 26.05).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.sandbox._sandbox import release_env  # noqa: E402
from tests.sandbox.test_allocation_hooks import ACCOUNT, SUPER_TOKEN, USER, install_hooks  # noqa: E402


def _times(env: dict[str, str], n: int) -> tuple[list[float], list[str]]:
    """Seconds per submission, and the job ids to cancel."""
    out, jobs = [], []
    for _ in range(n):
        t0 = time.perf_counter()
        done = subprocess.run(["runuser", "-u", USER, "--", "sbatch", "--parsable", "-A", ACCOUNT, "-p", "parked",
                               "-n", "1", "-t", "1", "--chdir=/tmp", "-o", "/dev/null", "--wrap", "true"],
                              env=env, capture_output=True, text=True, timeout=60)
        out.append(time.perf_counter() - t0)
        if done.returncode != 0:
            raise SystemExit(f"sbatch failed: {done.stderr.strip()}")
        jobs.append(done.stdout.strip().split(";")[0])
    return out, jobs


def _p99(xs: list[float]) -> float:
    return sorted(xs)[min(len(xs) - 1, int(len(xs) * 0.99))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--release", default="22.05", choices=("22.05", "24.11", "26.05"))
    ap.add_argument("-n", type=int, default=30, help="submissions per row (default 30)")
    args = ap.parse_args()
    env = release_env(args.release)
    rows: dict[str, list[float]] = {}
    jobs: list[str] = []
    tmp = Path(tempfile.mkdtemp(prefix="fairtop-submit-bench-"))
    with install_hooks(env, tmp) as h:
        user = h["user_env"]
        subprocess.run(["scontrol", "update", "PartitionName=parked", "State=DOWN"], env=env, check=False)
        # no hook: the same sandbox with the filter switched off for this client (SLURM_CONF of
        # its own without CliFilterPlugins)
        plain = Path(env["SLURM_CONF"]).read_text().replace("CliFilterPlugins=cli_filter/lua\n", "")
        plain_conf = tmp / "slurm-nohook.conf"
        plain_conf.write_text(plain)
        for name, extra in [("no hook", {"SLURM_CONF": str(plain_conf)}), ("filter, published balances", None),
                            ("filter, stale balances (service down)", None),
                            ("filter -> fairtop, service up", {}),
                            ("filter -> fairtop, service down", {"FAIRTOP_ALLOC_URL": "http://127.0.0.1:9"})]:
            run_env = {**user, **(extra or {})}
            if name.startswith("filter,"):
                balances = tmp / "balances"
                pub_env = {**env, "FAIRTOP_ALLOC_URL": h["server"].url, "FAIRTOP_ALLOC_TOKEN": SUPER_TOKEN,
                           "FAIRTOP_ALLOC_AUTH": "token", "PYTHONPATH": str(ROOT)}
                subprocess.run([sys.executable, "-m", "tui.cli", "allocations", "publish-balances", str(balances),
                                "--once"], env=pub_env, check=True)
                if "stale" in name:
                    old = time.time() - 3600
                    text = balances.read_text().split("\n", 1)
                    balances.write_text(f"# fairtop balances 1 {int(old)}\n{text[1]}")
                os.chmod(tmp, 0o755)
                balances.chmod(0o644)
                run_env["FAIRTOP_BALANCES"] = str(balances)
            times, ids = _times(run_env, args.n)
            rows[name] = times
            jobs += ids
        subprocess.run(["scancel", *jobs], env=env, check=False)
    base = statistics.median(rows["no hook"])
    print(f"Slurm {args.release} sandbox, {args.n} x sbatch --wrap true each (as {USER}, partition parked); "
          f"load average {os.getloadavg()[0]:.2f}")
    print("| way | median ms | p99 ms | added: median ms | added: p99 ms |")
    print("|---|---:|---:|---:|---:|")
    for name, xs in rows.items():
        med, p99 = statistics.median(xs), _p99(xs)
        print(f"| {name} | {1000 * med:.1f} | {1000 * p99:.1f} | {1000 * (med - base):+.1f} | "
              f"{1000 * (p99 - base):+.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
