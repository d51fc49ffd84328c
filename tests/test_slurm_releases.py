"""tui.slurm_releases: each rule at the release its Slurm change came in (read in SchedMD's tags)."""

from __future__ import annotations

from tui.slurm_releases import release


def test_versions_as_slurm_prints_them():
    assert release("26.05.3").major == (26, 5) and release("slurm 24.11.7").major == (24, 11)
    assert release("22.05.8").version == "22.05.8" and release(None).major is None
    assert release("no version here").major is None


def test_each_rule_starts_at_its_release():
    # sacctmgr lost LFT/RGT and siblings follow the lineage from 23.11; sshare --json too
    assert [release(v).sacctmgr_lft for v in ("22.05.8", "23.02.7", "23.11.0", "26.05.3")] == [True, True, False, False]
    assert [release(v).lineage_order for v in ("23.02.7", "23.11.0")] == [False, True]
    assert [release(v).sshare_json for v in ("23.02.7", "23.11.0")] == [False, True]
    # classic FairShare from slurmctld (users only) from 25.11, recomputed by sshare before
    assert [release(v).controller_classic_fairshare for v in ("24.11.7", "25.05.5", "25.11.0", "26.05.3")] == [
        False, False, True, True]
    # unknown: the 22.05 ways (the demo, a source that does not say)
    unknown = release(None)
    assert unknown.sacctmgr_lft and not unknown.lineage_order and not unknown.controller_classic_fairshare


def test_a_release_newer_than_known_says_so_in_one_line():
    assert release("26.05.3").note() is None
    note = release("27.05.1").note()
    assert note is not None and "\n" not in note
    assert "Slurm 27.05.1 is newer than any release fairtop knows" in note and "as 26.05 prints it" in note
