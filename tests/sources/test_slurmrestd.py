"""slurmrestd source: the real captured 22.05 JSON through MockTransport, faults, and the live sandbox."""

from __future__ import annotations

import copy
import gzip
import json
import os
import random
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from tui.analysis.standing import build_standing
from tui.model import NO_VAL, USE_PARENT, Snapshot
from tui.sources import slurmrestd as rest
from tui.sources.errors import InputError, SourceUnavailable
from tui.sources.saved import load_folder
from tui.sources.sshare import parse_sshare

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SLURM = FIXTURES / "slurm"
#: Capture folders with both sshare output and slurmrestd v0.0.38 JSON from the same moment.
VARIANTS = sorted(p.parent for p in SLURM.glob("*/*/rest") if (p.parent / "sshare_a_l_P.psv").exists())
#: Path names of GET /openapi/v3 from the real 22.05.8 slurmrestd.
OPENAPI = json.loads((FIXTURES / "slurmrestd" / "openapi_v3_22.05.8_paths.json").read_text())
SOCKET = "/tmp/slurm-sandbox/run/slurmrestd.sock"

Handler = Callable[[httpx.Request], httpx.Response]


def _read(folder: Path, name: str) -> bytes:
    plain = folder / "rest" / name
    return plain.read_bytes() if plain.exists() else gzip.decompress((folder / "rest" / f"{name}.gz").read_bytes())


def _server(routes: dict[str, Any], log: list[str] | None = None) -> httpx.MockTransport:
    """A MockTransport answering ``routes[path]``: bytes, a JSON-able object, a Response, or a callable."""

    def handle(request: httpx.Request) -> httpx.Response:
        if log is not None:
            log.append(request.url.path)
        answer = routes.get(request.url.path)
        if callable(answer):
            answer = answer(request)
        if answer is None:
            return httpx.Response(404, text="Unable find requested URL. Please view /openapi/v3 for API reference.")
        if isinstance(answer, httpx.Response):
            return answer
        if isinstance(answer, bytes):
            return httpx.Response(200, content=answer)
        return httpx.Response(200, json=answer)

    return httpx.MockTransport(handle)


def _capture_routes(folder: Path) -> dict[str, Any]:
    return {
        "/openapi/v3": OPENAPI,
        "/slurmdb/v0.0.38/associations": _read(folder, "slurmdb_v0.0.38_associations.json"),
        "/slurm/v0.0.38/partitions": _read(folder, "slurm_v0.0.38_partitions.json"),
    }


def _snap(routes: dict[str, Any], **kw: Any) -> Snapshot:
    kw.setdefault("sleep", lambda s: None)
    return rest.live_snapshot(socket="/nonexistent/only-the-transport-is-used", transport=_server(routes), **kw)


def _same_tree(snap: Snapshot, sshare_text: bytes | str) -> None:
    want = parse_sshare(sshare_text).tree
    got = snap.tree
    assert got is not None
    for name in ("parent", "is_user", "account", "user", "shares_raw"):
        assert getattr(got, name).tolist() == getattr(want, name).tolist(), name


# --------------------------------------------------------------------------------------------
# real 22.05 JSON
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("folder", VARIANTS, ids=[f"{p.parent.name}/{p.name}" for p in VARIANTS])
def test_capture_tree_equals_sshare(folder: Path) -> None:
    snap = _snap(_capture_routes(folder))
    _same_tree(snap, (folder / "sshare_a_l_P.psv").read_bytes())
    assert snap.cluster == "sandbox"
    assert snap.tree is not None and snap.tree.sibling_order is None
    assert not snap.tree.usage_raw.any()
    assert any(w.startswith("usage unknown (shown as 0)") for w in snap.warnings)
    assert any(w.startswith("priority settings unknown") for w in snap.warnings)
    parts = {p.name: p for p in snap.partitions}
    assert parts["burn"].billing_weights == {"cpu": 1_000_000.0}
    assert parts["debug"].billing_weights == {}
    assert parts["burn"].tres_totals["mem"] == 1024.0


def test_parent_shares_and_root_as_sshare_prints() -> None:
    folder = SLURM / "nested_parent" / "fair_tree"
    tree = _snap(_capture_routes(folder)).tree
    assert tree is not None
    labels = [tree.label(i) for i in range(tree.size)]
    assert tree.shares_raw[0] == NO_VAL  # slurmdbd stores 1 for root; sshare prints nothing
    for label in ("ad/ud1", "ada", "ada/uda1", "adaa", "adaa/udaa1"):
        assert tree.shares_raw[labels.index(label)] == USE_PARENT, label
    # users first, then sub-accounts, each by name
    assert labels[:4] == ["root", "root/root", "root/u1", "root/u2"]
    assert labels[labels.index("ag"):] == ["ag", "ag/ug1", "aga", "aga/u2", "aga/uga1", "aga/uga2"]


def test_real_openapi_versions() -> None:
    versions = rest.pick_versions(OPENAPI)
    assert versions.associations == "/slurmdb/v0.0.38/associations"
    assert versions.partitions == "/slurm/v0.0.38/partitions"
    assert versions.shares is None
    assert versions.offered == ("slurm/v0.0.36", "slurm/v0.0.37", "slurm/v0.0.38",
                                "slurmdb/v0.0.36", "slurmdb/v0.0.37", "slurmdb/v0.0.38")


def test_newest_understood_version_wins() -> None:
    paths = {p: {} for p in ("/slurmdb/v0.0.38/associations", "/slurmdb/v0.0.45/associations/",
                             "/slurmdb/v0.0.46/associations/", "/slurm/v0.0.39/partitions/",
                             "/slurm/v0.0.40/shares", "/slurm/v0.0.46/partitions/")}
    versions = rest.pick_versions({"paths": paths})
    assert versions.associations == "/slurmdb/v0.0.45/associations/"  # v0.0.46: not known yet
    assert versions.partitions == "/slurm/v0.0.39/partitions/"
    assert versions.shares == "/slurm/v0.0.40/shares"


def test_unknown_versions_only() -> None:
    paths = {"/slurmdb/v0.0.46/associations": {}, "/slurm/v0.0.46/partitions": {}, "/openapi/v3": {}}
    with pytest.raises(SourceUnavailable, match=r"offers: slurm/v0\.0\.46, slurmdb/v0\.0\.46"):
        _snap({"/openapi/v3": {"paths": paths}})


def test_openapi_fallback_to_plain_openapi() -> None:
    folder = VARIANTS[0]
    routes = _capture_routes(folder)
    routes["/openapi"] = routes.pop("/openapi/v3")
    _same_tree(_snap(routes), (folder / "sshare_a_l_P.psv").read_bytes())


# --------------------------------------------------------------------------------------------
# usage, lft, newer shapes (synthesised from the real records)
# --------------------------------------------------------------------------------------------


def _assocs(folder: Path) -> list[dict[str, Any]]:
    return json.loads(_read(folder, "slurmdb_v0.0.38_associations.json"))["associations"]


def test_usage_and_lft_when_the_server_sends_them() -> None:
    folder = SLURM / "nested_parent" / "fair_tree"
    table = parse_sshare((folder / "sshare_a_l_P.psv").read_bytes())
    usage = {(str(a), str(u)): float(x) for a, u, x in zip(table.tree.account, table.tree.user, table.tree.usage_raw)}
    assocs = _assocs(folder)
    for k, a in enumerate(assocs):
        a["usage"] = {"raw_usage": usage[(a["account"], a["user"] or "")]}
        a["lft"] = 1000 - k
    routes = _capture_routes(folder)
    routes["/slurmdb/v0.0.38/associations"] = {"associations": assocs, "errors": []}
    snap = _snap(routes)
    assert snap.tree is not None
    assert snap.tree.usage_raw.tolist() == table.tree.usage_raw.tolist()
    assert snap.tree.sibling_order is not None and len(set(snap.tree.sibling_order.tolist())) == snap.tree.size
    assert not any("usage unknown" in w or "lft" in w for w in snap.warnings)


def test_usage_stays_exact_beyond_a_double() -> None:
    big = 2**64 - 1  # sshare prints RawUsage as %llu; a double would round it
    assocs = [{"account": "root", "cluster": "c", "shares_raw": 1, "usage": {"raw_usage": big}},
              {"account": "root", "user": "u", "cluster": "c", "shares_raw": 1, "usage": {"raw_usage": big - 1}}]
    built = rest.tree_from_associations(assocs)
    assert built.usage_known
    assert built.tree.usage_raw[1] == np.longdouble(str(big - 1)) != np.longdouble(str(big))


def _v40(folder: Path) -> dict[str, Any]:
    """The captured associations in v0.0.40's number shape, plus a matching shares response."""
    table = parse_sshare((folder / "sshare_a_l_P.psv").read_bytes())
    assocs = _assocs(folder)
    for a in assocs:
        a["shares_raw"] = {"set": True, "infinite": False, "number": a["shares_raw"]}
        a["usage"] = None
    shares = []
    for i in range(table.tree.size):
        is_user = bool(table.tree.is_user[i])
        parent = table.tree.parent[i]
        shares.append({
            "name": table.tree.user[i] if is_user else table.tree.account[i],
            "parent": table.tree.account[i] if is_user else ("" if parent < 0 else table.tree.account[parent]),
            "partition": "", "type": ["USER" if is_user else "ASSOCIATION"],
            "usage": int(table.tree.usage_raw[i]),
        })
    return {"assocs": assocs, "shares": {"shares": {"shares": shares, "total_shares": 1}}, "table": table}


def test_usage_from_shares_endpoint() -> None:
    folder = SLURM / "deep4" / "fair_tree"
    data = _v40(folder)
    routes = {
        "/openapi/v3": {"paths": {"/slurmdb/v0.0.40/associations/": {}, "/slurm/v0.0.40/shares/": {},
                                  "/slurm/v0.0.40/partitions/": {}}},
        "/slurmdb/v0.0.40/associations/": {"associations": data["assocs"]},
        "/slurm/v0.0.40/shares/": data["shares"],
        "/slurm/v0.0.40/partitions/": {"partitions": [
            {"name": "burn", "tres": {"billing_weights": "CPU=2", "configured": "cpu=4,mem=2G"},
             "cpus": {"total": 4}, "nodes": {"total": 1}, "priority": {"job_factor": 3, "tier": 1}}]},
    }
    snap = _snap(routes)
    _same_tree(snap, (folder / "sshare_a_l_P.psv").read_bytes())
    assert snap.tree is not None
    assert snap.tree.usage_raw.tolist() == data["table"].tree.usage_raw.tolist()
    assert not any("usage unknown" in w for w in snap.warnings)
    (burn,) = snap.partitions
    assert (burn.billing_weights, burn.total_cpus, burn.priority_job_factor, burn.tres_totals["mem"]) == (
        {"cpu": 2.0}, 4, 3, 2048.0)


def test_shares_endpoint_failure_is_a_warning() -> None:
    folder = SLURM / "deep4" / "fair_tree"
    data = _v40(folder)
    routes = {
        "/openapi/v3": {"paths": {"/slurmdb/v0.0.40/associations": {}, "/slurm/v0.0.40/shares": {}}},
        "/slurmdb/v0.0.40/associations": {"associations": data["assocs"]},
        "/slurm/v0.0.40/shares": httpx.Response(403, json={"errors": [{"error": "Access denied"}]}),
    }
    snap = _snap(routes)
    assert any("usage unknown" in w and "HTTP 403: Access denied" in w for w in snap.warnings)
    assert any("partitions unknown" in w for w in snap.warnings)


def test_deleted_and_other_clusters() -> None:
    folder = SLURM / "deep4" / "fair_tree"
    assocs = _assocs(folder)
    other = copy.deepcopy(assocs[:3])
    for a in other:
        a["cluster"] = "other"
    gone = dict(copy.deepcopy(assocs[-1]), user="ghost", flags=["DELETED"])
    routes = _capture_routes(folder)
    routes["/slurmdb/v0.0.38/associations"] = {"associations": other + assocs + [gone]}
    snap = _snap(routes, cluster="sandbox")
    _same_tree(snap, (folder / "sshare_a_l_P.psv").read_bytes())
    snap = _snap(routes)
    assert snap.cluster == "other" and any("clusters other, sandbox" in w for w in snap.warnings)


# --------------------------------------------------------------------------------------------
# faults
# --------------------------------------------------------------------------------------------


def _flaky(responses: list[httpx.Response | Exception], then: Any) -> Callable[[httpx.Request], Any]:
    seq = list(responses)

    def answer(request: httpx.Request) -> Any:
        if seq:
            item = seq.pop(0)
            if isinstance(item, Exception):
                raise item
            return item
        return then

    return answer


def test_5xx_then_success_is_retried() -> None:
    folder = VARIANTS[0]
    routes = _capture_routes(folder)
    routes["/slurmdb/v0.0.38/associations"] = _flaky(
        [httpx.Response(503, text="busy"), httpx.Response(429, headers={"Retry-After": "2"})],
        httpx.Response(200, content=routes["/slurmdb/v0.0.38/associations"]))
    waits: list[float] = []
    snap = _snap(routes, sleep=waits.append)
    _same_tree(snap, (folder / "sshare_a_l_P.psv").read_bytes())
    assert len(waits) == 2 and 0.375 <= waits[0] <= 0.5 and waits[1] == 2.0


def test_retries_are_bounded() -> None:
    log: list[str] = []
    routes = {"/openapi/v3": httpx.Response(502, text="<html>Bad Gateway</html>")}
    with pytest.raises(SourceUnavailable, match=r"/openapi/v3: HTTP 502: <html>Bad Gateway</html>"):
        rest.live_snapshot(socket="x", transport=_server(routes, log), sleep=lambda s: None, retries=2)
    assert log == ["/openapi/v3"] * 3


def test_slurm_error_500_is_not_retried() -> None:
    log: list[str] = []
    body = {"errors": [{"description": "Nothing found", "error_number": 9003,
                        "error": "Nothing found with query", "source": "slurmdb_associations_get"}]}
    routes = {"/openapi/v3": OPENAPI, "/slurmdb/v0.0.38/associations": httpx.Response(500, json=body)}
    with pytest.raises(rest.ApiError, match="HTTP 500: Nothing found with query") as info:
        rest.live_snapshot(socket="x", transport=_server(routes, log), sleep=lambda s: None)
    assert info.value.status == 500
    assert log == ["/openapi/v3", "/slurmdb/v0.0.38/associations"]


def test_401_names_status_and_error_text() -> None:
    body = {"errors": [{"error": "Authentication failure", "error_number": 1007}]}
    routes = {"/openapi/v3": httpx.Response(401, json=body)}
    with pytest.raises(SourceUnavailable, match="HTTP 401: Authentication failure"):
        _snap(routes)


@pytest.mark.parametrize("body", [b"{not json", b"\xff\xfe", b"[1, 2]", b""])
def test_malformed_json_names_the_endpoint(body: bytes) -> None:
    routes = {"/openapi/v3": OPENAPI, "/slurmdb/v0.0.38/associations": body}
    with pytest.raises(InputError, match=r"^slurmrestd /slurmdb/v0\.0\.38/associations: "):
        _snap(routes)


@pytest.mark.parametrize("doc, message", [
    ({"associations": {}}, "'associations' is missing or not a list"),
    ({"associations": [1]}, "association #0 is int"),
    ({"associations": [{"account": "root", "cluster": "c", "shares_raw": "x"}]}, "shares_raw 'x'"),
    ({"associations": [{"account": "a", "cluster": "c", "parent_account": "root", "shares_raw": 1}]},
     "no root association"),
    ({"associations": [{"account": "root", "cluster": "c", "shares_raw": 1},
                       {"account": "a", "cluster": "c", "parent_account": "b", "shares_raw": 1}]},
     "account 'a' is under account 'b', which has no association"),
    ({"associations": [{"account": "root", "cluster": "c", "shares_raw": 1},
                       {"account": "a", "cluster": "c", "parent_account": "b", "shares_raw": 1},
                       {"account": "b", "cluster": "c", "parent_account": "a", "shares_raw": 1}]},
     "not reachable from root"),
    ({"associations": [{"account": "root", "cluster": "c", "shares_raw": 1, "user": 5}]}, "'user' is int"),
])
def test_unexpected_shapes(doc: dict[str, Any], message: str) -> None:
    routes = {"/openapi/v3": OPENAPI, "/slurmdb/v0.0.38/associations": doc}
    with pytest.raises(InputError, match=message):
        _snap(routes)


def test_openapi_without_paths() -> None:
    with pytest.raises(InputError, match="not an OpenAPI document"):
        _snap({"/openapi/v3": {"hello": 1}})


def test_bad_partitions_are_a_warning() -> None:
    folder = VARIANTS[0]
    routes = _capture_routes(folder)
    routes["/slurm/v0.0.38/partitions"] = {"partitions": [{"name": "p", "billing_weights": "CPU=x"}]}
    snap = _snap(routes)
    assert snap.partitions == ()
    assert any("partitions unknown" in w and "billing_weights" in w for w in snap.warnings)


@pytest.mark.parametrize("exc, message, attempts", [
    (httpx.ConnectTimeout, "cannot connect", 3),
    (httpx.ConnectError, "cannot connect", 3),
    (httpx.ReadTimeout, "timed out", 1),  # a busy server: asking again would only double the wait
])
def test_timeouts_and_refusals(exc: type[httpx.TransportError], message: str, attempts: int) -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        raise exc("no", request=request)

    with pytest.raises(rest.ApiUnavailable, match=message):
        rest.live_snapshot(socket="x", transport=httpx.MockTransport(handler), sleep=lambda s: None, retries=2)
    assert len(calls) == attempts


def test_connect_error_then_success() -> None:
    folder = VARIANTS[0]
    routes = _capture_routes(folder)
    routes["/openapi/v3"] = _flaky([httpx.ConnectError("refused")], OPENAPI)
    _same_tree(_snap(routes), (folder / "sshare_a_l_P.psv").read_bytes())


def test_missing_socket(tmp_path: Path) -> None:
    with pytest.raises(SourceUnavailable, match="no socket at"):
        rest.live_snapshot(socket=str(tmp_path / "nope.sock"))


def test_refused_socket(tmp_path: Path) -> None:
    import socket as sk

    path = tmp_path / "dead.sock"
    s = sk.socket(sk.AF_UNIX)
    s.bind(str(path))  # bound, never listening: connect() is refused
    try:
        with pytest.raises(SourceUnavailable, match="cannot connect"):
            rest.live_snapshot(socket=str(path), sleep=lambda t: None, retries=1)
    finally:
        s.close()


def test_url_sends_jwt_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[httpx.Headers] = []
    folder = VARIANTS[0]
    routes = _capture_routes(folder)
    transport = _server(routes)

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers)
        return transport.handle_request(request)

    monkeypatch.setenv("SLURM_JWT", "tok123")
    snap = rest.live_snapshot(url="http://head:6820/", user="alice", transport=httpx.MockTransport(handler))
    assert "http://head:6820" in snap.source
    assert all(h["X-SLURM-USER-TOKEN"] == "tok123" and h["X-SLURM-USER-NAME"] == "alice" for h in seen)
    monkeypatch.delenv("SLURM_JWT")
    with pytest.raises(SourceUnavailable, match="no JWT"):
        rest.live_snapshot(url="http://head:6820")


@pytest.mark.parametrize("lft", [1e300, -1, 2.5, float("nan"), "7"])
def test_bad_lft_means_no_sibling_order(lft: Any) -> None:
    assocs = _assocs(SLURM / "deep4" / "fair_tree")
    for k, a in enumerate(assocs):
        a["lft"] = k
    assocs[-1]["lft"] = lft
    assert rest.tree_from_associations(assocs).tree.sibling_order is None


def test_fuzzed_records_raise_only_input_errors() -> None:
    """Mutated real records: a snapshot or an InputError, never another exception."""
    base = _assocs(SLURM / "nested_parent" / "fair_tree")
    rng = random.Random(7)
    junk: list[Any] = [None, "", "root", 0, -1, 2**40, 1.5, [], {}, {"set": False}, True, "parent", "x\x00y",
                      float("nan"), float("inf"), 1e300, {"number": float("nan")}, {"raw_usage": -1.0}]
    keys = ["account", "user", "parent_account", "shares_raw", "cluster", "partition", "usage", "flags", "lft"]
    for _ in range(300):
        assocs = copy.deepcopy(base)
        for _ in range(rng.randint(1, 3)):
            rec = rng.choice(assocs)
            rec[rng.choice(keys)] = rng.choice(junk)
        if rng.random() < 0.2:
            assocs.append(copy.deepcopy(rng.choice(assocs)))
        try:
            rest.tree_from_associations(assocs)
        except InputError:
            pass


# --------------------------------------------------------------------------------------------
# the real sandbox
# --------------------------------------------------------------------------------------------


@pytest.mark.sandbox
@pytest.mark.skipif(not os.environ.get("FAIRTOP_SANDBOX"),
                    reason="needs the running Slurm sandbox: set FAIRTOP_SANDBOX=1")
def test_live_socket_equals_live_sshare() -> None:
    env = dict(os.environ, SLURM_CONF="/tmp/slurm-sandbox/etc/slurm.conf")
    sshare = subprocess.run(["sshare", "-a", "-l", "-P"], env=env, capture_output=True, timeout=30, check=True).stdout
    snap = rest.live_snapshot(socket=SOCKET, timeout=httpx.Timeout(30.0, connect=3.0))
    _same_tree(snap, sshare)
    assert snap.cluster == env.get("SANDBOX_CLUSTER", "sandbox")
    assert snap.source.startswith(f"slurmrestd unix socket {SOCKET} (slurmdb v0.0.38, slurm v0.0.38)")
    from tui.sources.slurm_text import parse_partitions

    shown = subprocess.run(["scontrol", "show", "partition"], env=env, capture_output=True, timeout=30,
                           check=True).stdout
    assert {p.name: p.billing_weights for p in snap.partitions} == {
        p.name: p.billing_weights for p in parse_partitions(shown)}


def test_partition_limits_from_the_real_v0038_answer() -> None:
    # max_time_limit -1 and maximum_nodes_per_job -1: UNLIMITED; a limit of 90 minutes is 5,400 s
    import json

    from tui.model import UNLIMITED
    from tui.sources.slurmrestd import partitions_from_json

    doc = json.loads((FIXTURES / "slurm" / "live" / "fair_tree" / "rest" / "slurm_v0.0.38_partitions.json").read_text())
    debug = {p.name: p for p in partitions_from_json(doc)}["debug"]
    assert (debug.max_time_s, debug.max_nodes, debug.node_list) == (UNLIMITED, UNLIMITED, "sandbox-node")
    assert debug.node_types == ()  # slurmrestd's nodes are not read: the what-if says "unknown"
    doc["partitions"][0] = {**doc["partitions"][0], "max_time_limit": 90, "maximum_nodes_per_job": 2}
    first = partitions_from_json(doc)[0]
    assert (first.max_time_s, first.max_nodes) == (5400, 2)


# -- Slurm 24.11 (v0.0.40-v0.0.42) and 26.05 (v0.0.42-v0.0.45), with /shares ----------------

#: What each release's slurmrestd offers (capture.sh recorded v0.0.42 on both).
OFFERED = {"slurm-24.11": (40, 41, 42), "slurm-26.05": (42, 43, 44, 45)}
CAPTURES_NEW = sorted(p.parents[1] for where in OFFERED
                      for p in (FIXTURES / where).glob("*/*/rest/slurm_v0.0.42_shares.json*"))
READ = (("slurmdb", "associations"), ("slurm", "partitions"), ("slurm", "shares"), ("slurm", "jobs"))


@pytest.mark.parametrize("folder", CAPTURES_NEW, ids=lambda p: f"{p.parents[1].name}/{p.parent.name}/{p.name}")
def test_rest_of_newer_releases_gives_the_tree_usage_and_fairshare_sshare_printed(folder: Path) -> None:
    """The REST source on 24.11's and 26.05's recorded JSON: the newest version it knows of those
    the release offers (the recorded v0.0.42 answers there), the whole tree, and every cell sshare
    printed, as printed: the server's own values in sshare's format, with sshare's blanks; the
    algorithm and dampening read from /shares; the engine agrees with every cell."""
    offered = OFFERED[folder.parents[1].name]
    newest = f"v0.0.{max(offered)}"
    log: list[str] = []
    routes: dict[str, Any] = {"/openapi/v3": {"paths": {f"/{plugin}/v0.0.{n}/{endpoint}": {} for n in offered
                                                        for plugin, endpoint in READ}}}
    for plugin, endpoint in READ:
        routes[f"/{plugin}/{newest}/{endpoint}"] = _read(folder, f"{plugin}_v0.0.42_{endpoint}.json")
    snap = rest.live_snapshot(socket="/nonexistent", transport=_server(routes, log), sleep=lambda s: None)
    assert f"/slurmdb/{newest}/associations" in log and f"/slurm/{newest}/shares" in log
    sshare_text = (folder / "sshare_a_l_P.psv").read_bytes()
    _same_tree(snap, sshare_text)
    table = parse_sshare(sshare_text)
    saved = load_folder(folder)
    assert snap.scheduler_version == saved.scheduler_version
    assert snap.settings.algorithm == saved.settings.algorithm
    # 24.11's slurmctld computes no classic factor (sshare did, with the dampening): unknown, said so
    no_factor = saved.settings.algorithm == "classic" and folder.parents[1].name == "slurm-24.11"
    assert snap.settings.dampening == (1 if no_factor else saved.settings.dampening)
    assert no_factor == any(w.startswith("FairShare of slurmrestd") for w in snap.warnings)
    assert snap.printed is not None
    compared = 0
    for column, cells in snap.printed.items():
        assert list(cells) == table.column(column), column
        compared += len(cells)
    assert set(snap.printed) == {c for c in ("NormShares", "RawUsage", "EffectvUsage", "FairShare", "LevelFS")
                                 if c in table.header and not (no_factor and c == "FairShare")}
    assert compared >= 3 * snap.tree.size
    standing = build_standing(snap)
    assert standing.reconciliation is not None and standing.reconciliation.disagreements == ()


@pytest.mark.sandbox
@pytest.mark.skipif(not (os.environ.get("FAIRTOP_SANDBOX") and os.environ.get("FAIRTOP_SANDBOX_2605")),
                    reason="needs the running Slurm 26.05 sandbox (CI starts one as root: FAIRTOP_SANDBOX_2605)")
def test_live_26_05_socket_gives_the_tree_with_sshares_usage_and_fairshare(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The live 26.05 slurmrestd (its own user, rest_auth/local; root may use the socket) against the
    same cluster's sshare, taken right after a priority cycle so both read one cycle's values: the
    same cells, and the same disagreements with the engine as the sshare source finds (none on a
    cluster at rest; CI once caught 26.05's slurmctld printing LevelFS from other usage than it
    printed for a few minutes after the earlier sandbox tests restarted it, and both sources flagged
    the same 7 cells)."""
    from tests.sandbox._sandbox import after_a_cycle, release_env
    from tui.sources import slurm_cli

    env = release_env("26.05")
    for key in ("PATH", "SLURM_CONF"):
        monkeypatch.setenv(key, env[key])
    socket = f"{env['SANDBOX_DIR']}/run/restd/slurmrestd.sock"
    for _ in range(3):  # a cycle may fall between the reads: then once more
        after_a_cycle(env, within=30)
        snap = rest.live_snapshot(socket=socket, timeout=httpx.Timeout(30.0, connect=3.0))
        cli = slurm_cli.live_snapshot()
        sshare = subprocess.run(["sshare", "-a", "-l", "-P"], env=env, capture_output=True, timeout=30,
                                check=True).stdout
        table = parse_sshare(sshare)
        assert snap.printed is not None and cli.printed is not None
        if snap.printed["RawUsage"] == tuple(table.column("RawUsage")) == cli.printed["RawUsage"]:
            break
    _same_tree(snap, sshare)
    assert snap.scheduler_version is not None and snap.scheduler_version.startswith("26.05.")
    assert "(slurmdb v0.0.45, slurm v0.0.45)" in snap.source
    for column, cells in snap.printed.items():
        assert list(cells) == table.column(column), column
    ours, theirs = (build_standing(s).reconciliation for s in (snap, cli))
    assert ours is not None and theirs is not None
    flagged = [(d.label, d.column, d.printed) for d in ours.disagreements]
    assert flagged == [(d.label, d.column, d.printed) for d in theirs.disagreements]
    if flagged:  # slurmctld printed values it did not compute from the usage it printed: said, not hidden
        print(f"slurmctld 26.05 not at rest: {len(flagged)} printed cells differ from its own usage: {flagged}")


def test_pending_jobs_carry_squeues_reason_and_the_estimate() -> None:
    # real 22.05.8 v0.0.38 jobs: the probe jobs wait in the DOWN partition parked
    doc = json.loads(gzip.decompress((FIXTURES / "slurm" / "live" / "fair_tree" / "rest" /
                                      "slurm_v0.0.38_jobs.json.gz").read_bytes()))
    jobs = [j for j in rest.jobs_from_json(doc) if j.state == "PENDING"]
    assert jobs and {j.reason for j in jobs} == {"PartitionDown"}
    assert all(j.start_time is None and j.qos == "normal" and j.dependency is None for j in jobs)  # 0: none
    first = jobs[0]
    raw = next(x for x in doc["jobs"] if str(x["job_id"]) == first.job_id)
    assert first.eligible_time is not None and first.eligible_time.timestamp() == raw["eligible_time"]
    described = dict(raw, state_description="ReqNodeNotAvail, UnavailableNodes:n1", start_time=1795290000)
    (job,) = rest.jobs_from_json({"jobs": [described]})
    assert job.reason == "ReqNodeNotAvail, UnavailableNodes:n1"
    assert job.start_time is not None and job.start_time.timestamp() == 1795290000


def test_v0_0_36_jobs_name_their_user_from_the_user_id() -> None:
    """22.05's v0.0.36 sends ``"user_name": ""`` (recorded): the name comes from ``user_id`` as
    squeue's does (here root's uid, which every machine has)."""
    doc = json.loads((FIXTURES / "slurmrestd" / "jobs_v0.0.36_22.05.json").read_text())
    assert doc["jobs"][0]["user_name"] == ""
    doc["jobs"][0]["user_id"] = 0
    (job,) = rest.jobs_from_json(doc)
    assert (job.user, job.account, job.reason) == ("root", "wq", "PartitionDown")
    doc["jobs"][0]["user_id"] = None
    with pytest.raises(InputError, match="no user_name or account"):
        rest.jobs_from_json(doc)
