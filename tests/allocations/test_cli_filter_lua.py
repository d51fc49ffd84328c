"""cli_filter.lua's own check on the published balances, run by a real Lua 5.3 (the release Slurm's
cli_filter/lua links), against the Python check it stands in for: for every request the same
verdict and the same words, and no fairtop started. Needs Debian's lua5.3 (.ci/run installs it)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
from datetime import date, timedelta
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.needs import needs, program
from tui.allocations import slurm_hooks as hooks
from tui.allocations.balance_file import format_balances, write_balances
from tui.allocations.records import AllocationRecord

LUA = shutil.which("lua5.3")
pytestmark = needs(program("lua5.3", "apt-get install lua5.3; .ci/run does so as root"))
FILTER = ROOT / "tui" / "allocations" / "cli_filter.lua"
GID = os.getgid()
TODAY = date.today()


def _alloc(id_: int, account: str, gid: int, resource: str, balance: int, start: date, end: date) -> AllocationRecord:
    return AllocationRecord(id=id_, project=id_, project_name=account, gid=gid, account=account, resource=resource,
                            category="startup", start=str(start), end=str(end), credits=balance, predebits=0,
                            debits=0, balance=balance)


ALLOCS = [
    _alloc(1, "chem", GID + 1, "cpu", 11, TODAY - timedelta(days=3), TODAY + timedelta(days=30)),
    _alloc(2, "bio", GID, "cpu", 1_234_567, TODAY - timedelta(days=3), TODAY + timedelta(days=3)),
    _alloc(3, "chem", GID + 1, "gpu", 100, TODAY, TODAY),
    _alloc(4, "old", GID + 2, "gpu", 10**6, TODAY - timedelta(days=90), TODAY - timedelta(days=1)),
]


def _lua(options: dict[str, str], balances: Path | None, env: dict[str, str] | None = None,
         user: str | None = None) -> tuple[int, str, str]:
    """slurm_cli_pre_submit(options) in lua5.3: (return code, stderr, stdout). fairtop is replaced by
    an echo, so a fall back to Python shows on stdout. ``user``: run as that user (runuser, as root)."""
    assert LUA, "no lua5.3: .ci/run installs it (apt-get install lua5.3)"
    table = ", ".join(f'["{k}"] = "{v}"' for k, v in options.items())
    script = (f'slurm = {{SUCCESS = 0, ERROR = -1}}\ndofile("{FILTER}")\n'
              f'os.exit(slurm_cli_pre_submit({{{table}}}, 0) == 0 and 0 or 1)\n')
    text = FILTER.read_text().replace('local FAIRTOP = "fairtop"', 'local FAIRTOP = "echo fairtop-started"')
    patched = Path(os.environ.get("PYTEST_TMP", "/tmp")) / f"cli_filter_{os.getpid()}.lua"
    patched.write_text(text)
    patched.chmod(0o644)  # whatever the umask: a ``user`` reads it too
    run_env = {k: v for k, v in os.environ.items() if k not in ("SLURM_JOB_ID", "FAIRTOP_BALANCES")}
    if balances is not None:
        run_env["FAIRTOP_BALANCES"] = str(balances)
    run_env.update(env or {})
    try:
        as_user = ["runuser", "-u", user, "--"] if user else []
        done = subprocess.run([*as_user, str(LUA), "-e", script.replace(str(FILTER), str(patched))],
                              capture_output=True, text=True, env=run_env, timeout=30)
    finally:
        patched.unlink(missing_ok=True)
    return done.returncode, done.stderr.strip(), done.stdout.strip()


class _Api:
    async def allocations(self) -> list[AllocationRecord]:
        return ALLOCS


def _python(options: dict[str, str]) -> tuple[int, str]:
    """What ``fairtop allocations hook submit`` decides and prints for the same options."""
    job = hooks.submitted_job(options, os.getuid(), GID)
    try:
        note = asyncio.run(hooks.submit_check(_Api(), job, TODAY))  # type: ignore[arg-type]
    except hooks.Refused as exc:
        return 1, f"fairtop: job refused: {exc}"
    return 0, note


@pytest.fixture
def balances(tmp_path: Path) -> Path:
    path = tmp_path / "balances"
    write_balances(path, format_balances(ALLOCS, time.time()))
    return path


CASES = [
    {"account": "chem", "ntasks": "1", "cpus-per-task": "2", "time": "00:06:00"},  # 12 > 11
    {"account": "chem", "ntasks": "1", "time": "00:05:00"},  # fits: 5 of 11
    {"account": "bio", "ntasks": "64", "time": "5-00:00:00"},  # fits: 460,800 of 1,234,567
    {"account": "bio", "ntasks": "256", "time": "5-00:00:00"},  # 1,843,200: refused, 20,576.1 SU
    {"account": "bio", "nodes": "3", "time": "2-12"},  # nodes when no ntasks; D-H
    {"account": "bio", "nodes": "1-0", "ntasks": "2", "cpus-per-task": "4", "time": "90:30"},  # M:S rounds up
    {"account": "chem", "gres": "gpu:a100:2", "time": "60"},  # gpu: 120 > 100
    {"account": "chem", "gpus": "1", "time": "1:40:00"},  # gpu: fits, 100 of 100
    {"account": "old", "gpus": "1", "time": "5"},  # expired: no active gpu allocation
    {"ntasks": "1", "time": "10"},  # no account: the submitter's group (bio)
    {"account": "zzz", "ntasks": "1", "time": "3-1:2:3"},  # an unknown account: the group's again
]


@pytest.mark.parametrize("options", CASES, ids=[str(i) for i in range(len(CASES))])
def test_the_filter_decides_as_fairtop_does_without_starting_it(options: dict[str, str], balances: Path) -> None:
    code, err, out = _lua({"type": "sbatch", **options}, balances)
    want_code, want_err = _python(options)
    assert (code, err) == (want_code, want_err)
    assert out == ""  # fairtop was not started


def test_the_words_are_the_ones_users_read(balances: Path) -> None:
    assert _lua({"type": "sbatch", **CASES[3]}, balances)[1] == (
        "fairtop: job refused: allocation 2 of bio (cpu) has 1,234,567 cpu-minutes left (20,576.1 SU); this job "
        "may use up to 1,843,200 (256 x 7200 min). Ask for less time or fewer CPUs, or ask for a credit")
    fits = _lua({"type": "sbatch", **CASES[2]}, balances)[1]
    assert fits == "fairtop: job fits: 460,800 of 1,234,567 cpu-minutes left"


def test_steps_pass_untouched_and_what_it_cannot_read_goes_to_fairtop(balances: Path, tmp_path: Path) -> None:
    # srun inside a job: passed at once, no message, no fairtop (even asking for too much)
    assert _lua({"type": "srun", "account": "chem", "ntasks": "99", "time": "2982616-04:14:00"}, balances,
                {"SLURM_JOB_ID": "42"}) == (0, "", "")
    by_jobid = {"type": "srun", "jobid": "42", "account": "chem", "ntasks": "99", "time": "9"}
    assert _lua(by_jobid, balances) == (0, "", "")
    # a new allocation by srun is checked like sbatch
    assert _lua({"type": "srun", "account": "chem", "ntasks": "99", "time": "9"}, balances)[0] == 1
    # no time limit of its own (none, or NO_VAL): the partition's default, which fairtop looks up
    for time_ in (None, "2982616-04:14:00", "UNLIMITED"):
        opts = {"type": "sbatch", "account": "chem", **({"time": time_} if time_ else {})}
        assert _lua(opts, balances)[2].startswith("fairtop-started")
    # no file configured, or not one of ours: fairtop decides
    assert _lua({"type": "sbatch", **CASES[1]}, None)[2].startswith("fairtop-started")
    (tmp_path / "other").write_text("hello\n")
    assert _lua({"type": "sbatch", **CASES[1]}, tmp_path / "other")[2].startswith("fairtop-started")


def test_a_stale_file_is_no_opinion(tmp_path: Path) -> None:
    path = tmp_path / "balances"
    write_balances(path, format_balances(ALLOCS, time.time() - 600))
    code, err, out = _lua({"type": "sbatch", **CASES[0]}, path)  # would be refused if trusted
    assert (code, out) == (0, "") and err.startswith("fairtop: balance not checked: the published balances are 6")
