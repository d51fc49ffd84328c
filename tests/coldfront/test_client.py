"""fairtop's ColdFront client against a real ColdFront 1.1.10 (tests/coldfront/site.py): who sees
what, private attributes, tokens, an expired allocation, ColdFront down, slow, and behind a site CA."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.certs import make_pki
from tests.conftest import ROOT
from tests.coldfront.site import Site, free_port, serve
from tui.allocations.client import ApiError, ApiUnavailable, TlsRefused
from tui.allocations.coldfront import ColdFrontView, read_coldfront
from tui.analysis.coldfront import coldfront_json, coldfront_lines, reconcile
from tui.model import Budget
from tui.sources.slurm_text import parse_assoc_mgr


def view(site: Site, user: str, **kw: object) -> ColdFrontView:
    return asyncio.run(read_coldfront(site.url, token=site.tokens[user], timeout=20, **kw))  # type: ignore[arg-type]


def everything_shown(v: ColdFrontView) -> str:
    return "\n".join(coldfront_lines(v)) + json.dumps(coldfront_json(v))


def test_a_pi_sees_the_allocations_of_their_project(coldfront: Site) -> None:
    v = view(coldfront, "cgray")
    assert not v.staff
    by_resource = {a.resource: a for a in v.allocations}
    assert {a.project for a in v.allocations} == {"Angular momentum in QGP holography"}
    assert set(by_resource) == {"Chemistry-cgray", "University HPC", "Budgetstorage", "University Metered HPC"}
    metered = by_resource["University Metered HPC"]
    assert metered.status == "Active" and metered.slurm_account == "cgray-metered"
    assert [(u.name, u.budget, u.usage) for u in metered.usage] == [("Core Usage (Hours)", 150000.0, 41234.5)]
    assert metered.page == f"{coldfront.url}/allocation/{metered.id}/"
    assert "end date unknown" in metered.end_text() and metered.page in metered.end_text()
    lines = coldfront_lines(v)
    assert "  Core Usage (Hours): budget 150,000.0 hours · ColdFront's usage 41,234.5 hours (27%)" in lines


def test_an_expired_allocation_is_shown_ended(coldfront: Site) -> None:
    expired = [a for a in view(coldfront, "cgray").allocations if a.ended]
    assert [(a.status, a.slurm_account, [(u.budget, u.usage) for u in a.usage]) for a in expired] == [
        ("Expired", "cgray-old", [(5000.0, 4999.5)])]
    assert expired[0].end_text().startswith("ended: ColdFront marked it Expired")
    assert coldfront_json(ColdFrontView("x", False, tuple(expired)))["allocations"][0]["end_date"] is None


def test_a_project_manager_sees_the_project_a_user_of_none_sees_nothing(coldfront: Site) -> None:
    pi = {a.id for a in view(coldfront, "cgray").allocations}
    assert {a.id for a in view(coldfront, "pmanager").allocations} == pi
    nobody = view(coldfront, "nobody")
    assert nobody.allocations == () and not nobody.staff
    assert coldfront_lines(nobody) == [f"ColdFront {coldfront.url}: no allocations of yours (none of a project you "
                                       "lead, manage or use)"]


def test_nothing_of_one_users_shows_for_another(coldfront: Site) -> None:
    seen = {u: view(coldfront, u) for u in ("cgray", "sfoster", "staffer", "nobody")}
    ids = {u: {a.id for a in v.allocations} for u, v in seen.items()}
    assert ids["sfoster"] and ids["staffer"] and ids["cgray"]
    assert not ids["cgray"] & ids["sfoster"] and not ids["cgray"] & ids["staffer"]
    assert not ids["sfoster"] & ids["staffer"]
    assert "cgray-metered" not in everything_shown(seen["sfoster"]) + everything_shown(seen["staffer"])
    assert "Cluster operations" not in everything_shown(seen["cgray"]) + everything_shown(seen["sfoster"])


def test_private_attributes_reach_a_user_from_the_api_but_never_the_screen(coldfront: Site) -> None:
    raw = httpx.get(f"{coldfront.url}/api/allocations/?allocation_attributes=true",
                    headers={"Authorization": f"Token {coldfront.tokens['cgray']}"}).json()
    names = {a["allocation_attribute_type"] for row in raw for a in row["allocation_attributes"]}
    assert {"slurm_specs", "Paid Cloud Support (Hours)"} <= names  # ColdFront hands them over
    shown = everything_shown(view(coldfront, "cgray"))
    assert "slurm_specs" not in shown and "GrpTRESMins=cpu={cpumin}" not in shown
    assert "Fairshare=100:QOS+=supporters" not in shown and "Paid Cloud Support" not in shown


def test_staff_see_their_own_allocations_with_the_private_attributes(coldfront: Site) -> None:
    v = view(coldfront, "staffer")
    assert v.staff
    [ops] = v.allocations
    assert (ops.project, ops.slurm_account, ops.slurm_specs) == ("Cluster operations", "ops", "GrpTRESMins=cpu=120000")
    assert [(u.name, u.budget, u.usage) for u in ops.usage] == [("Core Usage (Hours)", 2000.0, 150.0),
                                                                 ("Paid Cloud Support (Hours)", 8.0, 2.0)]
    assert "  slurm_specs (staff only): GrpTRESMins=cpu=120000" in coldfront_lines(v)


def test_a_site_may_make_its_own_usage_attributes_public(coldfront: Site) -> None:
    [metered] = [a for a in view(coldfront, "cgray", public=("Paid Cloud Support (Hours)",)).allocations
                 if a.slurm_account == "cgray-metered"]
    assert [(u.name, u.usage) for u in metered.usage] == [("Core Usage (Hours)", 41234.5),
                                                           ("Paid Cloud Support (Hours)", 12.5)]


@pytest.mark.parametrize("which", ["wrong", "revoked"])
def test_a_wrong_or_revoked_token_is_refused_in_one_line(coldfront: Site, which: str) -> None:
    token = "0" * 40 if which == "wrong" else coldfront.revoked
    with pytest.raises(ApiError) as err:
        asyncio.run(read_coldfront(coldfront.url, token=token, timeout=20))
    assert err.value.status == 401
    assert str(err.value) == (f"401: ColdFront {coldfront.url} refused the token (Invalid token.): make a new one "
                              "on your ColdFront profile page (API token) and put it in the token file")


def test_coldfront_down_is_unavailable_at_once() -> None:
    started = time.monotonic()
    with pytest.raises(ApiUnavailable, match="ConnectError"):
        asyncio.run(read_coldfront(f"http://127.0.0.1:{free_port()}", token="x", timeout=5))
    assert time.monotonic() - started < 2


def test_coldfront_slow_times_out_and_the_loop_keeps_running(coldfront: Site) -> None:
    async def read_while_ticking() -> tuple[BaseException | None, int]:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        ticker = asyncio.create_task(tick())
        try:
            await read_coldfront(coldfront.url, token=coldfront.tokens["cgray"], timeout=1)
        except ApiUnavailable as exc:
            return exc, ticks
        finally:
            ticker.cancel()
        return None, ticks

    started = time.monotonic()
    with coldfront.stalled():
        exc, ticks = asyncio.run(read_while_ticking())
    took = time.monotonic() - started
    assert isinstance(exc, ApiUnavailable) and "ReadTimeout" in str(exc)
    assert 1 <= took < 4
    assert ticks >= 15  # the event loop (the app's) ran on while the read waited
    assert view(coldfront, "cgray").allocations  # and ColdFront answers again


def test_https_with_a_site_ca(tmp_path: Path) -> None:
    pki = make_pki(tmp_path / "pki")
    with serve(tmp_path, tls=(pki.cert, pki.key)) as site:
        v = asyncio.run(read_coldfront(site.url, token=site.tokens["sfoster"], timeout=60, ca_file=str(pki.ca)))
        assert {a.project for a in v.allocations} == {"Measuring critical behavior of quantum Hall transitions"}
        with pytest.raises(TlsRefused, match="checked against the system's CAs; set ca_file for a site CA"):
            asyncio.run(read_coldfront(site.url, token=site.tokens["sfoster"], timeout=60))


def test_reconciled_with_the_budget_slurm_dump_pushes(coldfront: Site, tmp_path: Path) -> None:
    """ColdFront's own slurm_dump writes the account's GrpTRESMins from its budget (Core Usage
    (Hours) x 60); with Slurm's usage beside it (scontrol show assoc_mgr's GrpTRESMins=cpu=L(U))
    the user sees both numbers, why they differ and that Slurm's stops jobs."""
    dump = coldfront.slurm_dump(tmp_path)["metered-hpc"]
    [line] = [x for x in dump.splitlines() if x.startswith("Account - 'cgray-metered'")]
    assert line == "Account - 'cgray-metered':GrpTRESMins=cpu=9000000"
    [record] = parse_assoc_mgr("ClusterName=metered-hpc Account=cgray-metered UserName= Partition= ID=7\n"
                               "    UsageRaw/Norm/Efctv=1.00/0.50/0.50\n"
                               "    GrpTRESMins=cpu=9000000(2700000)\n")
    budgets = [Budget(record.account, "", tres, lim, used) for tres, (lim, used) in record.grp_tres_mins.items()
               if lim is not None]
    v = view(coldfront, "cgray")
    old, r = sorted(reconcile(v.allocations, budgets), key=lambda x: x.budget is not None)
    assert old.allocation.ended and old.budget is None  # cgray-old: no budget in this dump
    assert (r.allocation.slurm_account, r.attribute.usage, r.slurm_used_hours) == ("cgray-metered", 41234.5, 45000.0)
    text = coldfront_lines(v, [r])
    at = text.index("  Core Usage (Hours): budget 150,000.0 hours · ColdFront's usage 41,234.5 hours (27%)")
    assert text[at + 1:at + 4] == [
        "    Slurm's own usage (GrpTRESRaw cpu): 45,000.0 h · difference +3,765.5 h",
        "    why: ColdFront's usage dates from the last XDMoD sync (coldfront xdmod_usage); Slurm counts every job "
        "as it ends",
        "    stops jobs: Slurm: jobs of cgray-metered start until GrpTRESRaw cpu reaches GrpTRESMins cpu=9,000,000 "
        "(6,300,000 min = 105,000.0 h left); ColdFront's number stops nothing"]


def _balance(site: Site, home: Path, *args: str, mode: int = 0o600,
             token: str = "cgray") -> subprocess.CompletedProcess:
    """``fairtop balance --coldfront URL --coldfront-token-file FILE ARGS`` with a fresh config
    (the demo source: no Slurm to compare with)."""
    token_file = home / "cf-token"
    token_file.write_text(site.tokens.get(token, token) + "\n")
    token_file.chmod(mode)
    (home / "config.toml").write_text('source = "demo"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRTOP_")}
    env["XDG_CONFIG_HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "tui.cli", "balance", "--config", str(home / "config.toml"),
                           "--coldfront", site.url, "--coldfront-token-file", str(token_file), *args],
                          env=env, capture_output=True, text=True, timeout=60, cwd=ROOT)


def test_fairtop_balance_coldfront_json_and_table(coldfront: Site, tmp_path: Path) -> None:
    done = _balance(coldfront, tmp_path, "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert (doc["coldfront"], doc["staff"]) == (coldfront.url, False)
    assert doc["slurm"] == "not compared: no cluster source (set source in the config, or run on the cluster)"
    [metered] = [a for a in doc["allocations"] if a["slurm_account"] == "cgray-metered"]
    assert metered["usage"] == [{"name": "Core Usage (Hours)", "budget": 150000.0, "budget_text": "150000",
                                 "usage": 41234.5}]
    assert metered["end_date"] is None and "slurm_specs" not in metered
    table = _balance(coldfront, tmp_path, token="sfoster")
    assert table.returncode == 0, table.stderr
    assert table.stdout.startswith(f"ColdFront {coldfront.url}: 2 allocation(s)\n#")
    assert "Quantum" not in done.stdout and "Angular" not in table.stdout


def test_fairtop_balance_coldfront_refuses_a_token_file_others_may_read_and_a_wrong_token(coldfront: Site,
                                                                                         tmp_path: Path) -> None:
    done = _balance(coldfront, tmp_path, mode=0o644)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"fairtop: coldfront_token_file: ColdFront token file {tmp_path}/cf-token is readable by "
                           f"others (mode 0644); chmod 600 {tmp_path}/cf-token\n")
    done = _balance(coldfront, tmp_path, token=coldfront.revoked)
    assert done.returncode == 1 and coldfront.revoked not in done.stderr
    assert done.stderr.startswith(f"fairtop: 401: ColdFront {coldfront.url} refused the token (Invalid token.)")


def _standing(site: Site, home: Path, token: str, *args: str) -> subprocess.CompletedProcess:
    (home / "config.toml").write_text(f'coldfront_url = "{site.url}"\nallocation_timeout = 2.0\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRTOP_")}
    env.update(XDG_CONFIG_HOME=str(home), FAIRTOP_COLDFRONT_TOKEN=token)
    return subprocess.run([sys.executable, "-m", "tui.cli", "standing", "--demo", "--user", "alice", "--config",
                           str(home / "config.toml"), *args], env=env, capture_output=True, text=True, timeout=60,
                          cwd=ROOT)


def test_fairtop_standing_adds_the_coldfront_line(coldfront: Site, tmp_path: Path) -> None:
    done = _standing(coldfront, tmp_path, coldfront.tokens["cgray"])
    assert done.returncode == 0, done.stderr
    standing, cold = done.stdout.splitlines()
    assert cold == "ColdFront: cgray-metered Core Usage (Hours): 41,234 used (27%) of 150,000 · 1 ended"
    doc = json.loads(_standing(coldfront, tmp_path, coldfront.tokens["nobody"], "--format", "json").stdout)
    assert doc["coldfront"] == {"coldfront": coldfront.url, "staff": False, "allocations": []}
    assert doc["user"] == "alice" and doc["text"] == standing


def test_fairtop_standing_stands_when_coldfront_stalls(coldfront: Site, tmp_path: Path) -> None:
    with coldfront.stalled():
        started = time.monotonic()
        done = _standing(coldfront, tmp_path, coldfront.tokens["cgray"])
        took = time.monotonic() - started
    assert done.returncode == 0 and took < 10, (done.stderr, took)
    standing, cold = done.stdout.splitlines()
    assert cold.startswith(f"ColdFront {coldfront.url}: unavailable (GET /api/allocations/: ReadTimeout")


def test_serve_metrics_serves_the_public_coldfront_budgets_of_its_token(coldfront: Site, tmp_path: Path) -> None:
    """``serve-metrics`` with coldfront_url: what its token's holder sees (staff here), public
    usage attributes only: the staff-only ones and slurm_specs never reach a scrape."""
    (tmp_path / "config.toml").write_text(f'coldfront_url = "{coldfront.url}"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRTOP_")}
    env.update(XDG_CONFIG_HOME=str(tmp_path), FAIRTOP_COLDFRONT_TOKEN=coldfront.tokens["staffer"])
    server = subprocess.Popen([sys.executable, "-m", "tui.cli", "serve-metrics", "--demo", "--listen", "127.0.0.1:0",
                               "--config", str(tmp_path / "config.toml")], env=env, cwd=ROOT, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split(" on ", 1)[1].split(" ", 1)[0]
        deadline = time.monotonic() + 30
        while "fairtop_coldfront_budget{" not in (text := httpx.get(url, timeout=10).text):
            assert time.monotonic() < deadline, text[-2000:]
            time.sleep(0.2)
    finally:
        server.terminate()
        server.wait(timeout=20)
    ours = sorted(line for line in text.splitlines() if line.startswith("fairtop_coldfront_"))
    labels = ('origin="coldfront",allocation="{}",project="Cluster operations",resource="University Metered HPC",'
              'status="Active",account="ops",attribute="Core Usage (Hours)"')
    ops_id = next(a.id for a in view(coldfront, "staffer").allocations)
    assert ours == [f"fairtop_coldfront_budget{{{labels.format(ops_id)}}} 2000.0",
                    f"fairtop_coldfront_usage{{{labels.format(ops_id)}}} 150.0"]
    assert "Paid Cloud Support" not in text and "GrpTRESMins=cpu=120000" not in text
