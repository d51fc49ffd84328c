"""Several clusters of one slurmdbd: ``-M NAME`` on every command, ``sshare -M a,b`` cut per cluster.

The fixture is real output of two Slurm 22.05 sandboxes (``alpha``, ``beta``) sharing one slurmdbd
(tests/fixtures/clusters/two_clusters/README.md).
"""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES
from tui.analysis.standing import build_standing
from tui.sources import saved, slurm_cli
from tui.sources.cluster_split import split_clusters, strip_cluster_header
from tui.sources.errors import InputError, SourceUnavailable
from tui.sources.slurm_cli import LiveSlurm, Output, commands, live_snapshots
from tui.sources.sshare import parse_sshare

TWO = FIXTURES / "clusters" / "two_clusters"
MULTI = (TWO / "sshare_M_alpha_beta.psv").read_bytes()


def test_sshare_M_sections_are_each_clusters_own_sshare() -> None:
    parts = split_clusters(MULTI, "sshare -M alpha,beta")
    assert list(parts) == ["alpha", "beta"]
    for name, body in parts.items():  # byte for byte what `sshare -M NAME` printed on its own
        assert body == (TWO / name / saved.FILES["sshare"]).read_bytes()
    alpha, beta = (parse_sshare(parts[n], n) for n in ("alpha", "beta"))
    assert [str(u) for u in alpha.tree.user if u] == ["root", "carol", "alice", "bob"]
    assert [str(u) for u in beta.tree.user if u] == ["root", "dave", "erin", "frank"]
    assert alpha.column("RawUsage")[5] == "2995661" and beta.column("FairShare")[4] == "0.500000"


def test_split_without_sections_and_malformed() -> None:
    plain = (TWO / "alpha" / saved.FILES["sshare"]).read_bytes()
    assert split_clusters(plain) == {"": plain}
    with pytest.raises(InputError, match="before the first"):
        split_clusters(b"Account|User\nCLUSTER: a\nAccount|User\n")
    with pytest.raises(InputError, match="'a' printed twice"):
        split_clusters(b"CLUSTER: a\nx\n\nCLUSTER: a\ny\n")
    assert split_clusters(b"CLUSTER: a\n\nCLUSTER: b\nx|y\n") == {"a": b"", "b": b"x|y\n"}
    assert strip_cluster_header(b"CLUSTER: beta\nJOBID\n") == b"JOBID\n"
    assert strip_cluster_header(b"JOBID\n") == b"JOBID\n"


def test_commands_ask_another_cluster_with_M() -> None:
    f = saved.FILES
    beta = commands(on="beta")
    assert beta[f["sshare"]] == ["sshare", "-M", "beta", "-a", "-l", "-P"]
    assert beta[f["config"]] == ["scontrol", "-M", "beta", "show", "config"]
    assert beta[f["assoc_mgr"]] == ["scontrol", "-M", "beta", "show", "assoc_mgr", "flags=assoc"]
    assert beta[f["sprio"]] == ["sprio", "-M", "beta", "-l"]
    assert beta[f["squeue"]][:4] == ["squeue", "-M", "beta", "-a"]
    assert beta[f["assoc"]][:6] == ["sacctmgr", "-P", "show", "assoc", "where", "cluster=beta"]
    assert commands()[f["sshare"]] == ["sshare", "-a", "-l", "-P"]  # the local cluster: no -M


class TwoClusters:
    """Answers each ``-M NAME`` command with that cluster's real output, headed by ``CLUSTER: NAME``
    where Slurm prints one (sshare, squeue); ``sshare -M alpha,beta`` with the real multi output."""

    def __init__(self) -> None:
        self.asked: list[list[str]] = []
        self.by_args = {tuple(args): (name, file) for name in ("alpha", "beta")
                        for file, args in commands(on=name).items()}

    def __call__(self, args: list[str], timeout: float = 20.0, check: bool = True) -> Output:
        self.asked.append(list(args))
        if args[:3] == ["sshare", "-M", "alpha,beta"]:
            return Output(tuple(args), 0, MULTI, "")
        if args[:3] == ["sshare", "-M", "alpha,nope"]:
            return Output(tuple(args), 0, b"CLUSTER: alpha\n" + (TWO / "alpha" / saved.FILES["sshare"]).read_bytes(),
                          "sshare: error: No cluster 'nope' known by database.\n")
        name, file = self.by_args[tuple(args)]
        if not (TWO / name / file).exists():  # taken before fairtop asked scontrol show node
            return Output(tuple(args), 1, b"", f"{file} is not in this capture\n")
        data = (TWO / name / file).read_bytes()
        if args[0] in ("sshare", "squeue"):
            data = f"CLUSTER: {name}\n".encode() + data
        return Output(tuple(args), 0, data, "")


def test_live_cluster_reads_as_its_capture() -> None:
    fake = TwoClusters()
    live = LiveSlurm(runner=lambda a, t: fake(a, t), on="beta")
    snap = live.read()
    kept = saved.load_folder(TWO / "beta")
    assert snap.tree is not None and kept.tree is not None
    assert snap.cluster == "beta" and snap.source.startswith("live Slurm -M beta")
    assert list(snap.tree.user) == list(kept.tree.user)
    assert snap.tree.usage_raw.tolist() == kept.tree.usage_raw.tolist()  # assoc_mgr's 2 decimals
    assert [j.user for j in snap.jobs] == [j.user for j in kept.jobs] == ["erin"]  # header stripped
    assert all("-M" in a and "beta" in a or "cluster=beta" in a for a in fake.asked)


def test_one_sshare_for_both_clusters_equals_their_printed_values(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = TwoClusters()
    monkeypatch.setattr(slurm_cli, "run", fake)
    snaps = live_snapshots(["alpha", "beta"])
    assert list(snaps) == ["alpha", "beta"]
    assert sum(a[0] == "sshare" for a in fake.asked) == 1  # one sshare -M alpha,beta, not one per cluster
    for name, snap in snaps.items():
        assert snap.cluster == name and snap.printed is not None
        rec = build_standing(snap, "").reconciliation
        assert rec is not None and rec.checked >= 20 and rec.disagreements == ()
        assert snap.printed["FairShare"] == tuple(parse_sshare(split_clusters(MULTI)[name]).column("FairShare"))


def test_a_cluster_sshare_does_not_print_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slurm_cli, "run", TwoClusters())
    with pytest.raises(SourceUnavailable, match="nothing for nope: sshare: error: No cluster 'nope'"):
        live_snapshots(["alpha", "nope"])


@pytest.mark.parametrize("name", ["alpha", "beta"])
def test_each_clusters_capture_equals_real_sshare(name: str) -> None:
    from tests.slurm_oracle import mismatches

    bad, checked = mismatches(TWO / name)
    assert bad == [] and checked >= 20
