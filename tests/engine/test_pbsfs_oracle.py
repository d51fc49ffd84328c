"""fairtop's PBS numbers against the real OpenPBS ``pbsfs`` (OpenPBS master cd7ab5e built from source
by ../shared/pbs-sandbox/build.sh into /opt/openpbs, run here on plain files as PBS_HOME, no server).

Seeded random trees (zero shares, empty groups, nesting to depth 4, entities never given usage,
names with ``:``); usage set with ``pbsfs -s`` (which writes the binary usage file), then for each
tree: the whole ``pbsfs -p`` listing, ``pbsfs -g`` of every entity (percentage,
fairshare_tree_usage, usage, usage/perc, the path from the root), ``pbsfs -c`` of random pairs,
``pbsfs -t``, and one ``pbsfs -d`` decay: every byte equal to fairtop's, which reads the files
pbsfs wrote (``fairtop --from`` / ``report --pbs-usage``). CI builds pbsfs (``.ci/pbs.sh``);
elsewhere these skip with one line without it (or without root), and fail in CI as root (tests/needs.py).
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ROOT
from tests.needs import file, needs, root
from tui.engine.pbs import compute, decay_usage
from tui.formats.pbsfs import compare, entity, listing, percent_text, tree_text
from tui.sources.pbs_folder import load_pbs_folder

PBS_PREFIX = Path(os.environ.get("PBS_PREFIX", "/opt/openpbs"))
PBSFS = PBS_PREFIX / "sbin" / "pbsfs"
pytestmark = needs(file(PBSFS, "built by ../shared/pbs-sandbox/build.sh; .ci/pbs.sh does so as root"),
                   root("pbsfs runs only as root"))
TREES = 40


def _pbsfs(home: Path, *args: str) -> str:
    """The real pbsfs on the fairshare files under ``home/sched_priv`` with no PBS server (it reads only
    those files): a pbs.conf naming ``home`` as PBS_HOME, OpenPBS's default sched_config if none."""
    (home / "sched_priv").mkdir(parents=True, exist_ok=True)
    if not (home / "sched_priv" / "sched_config").exists():
        shutil.copy(PBS_PREFIX / "etc" / "pbs_sched_config", home / "sched_priv" / "sched_config")
    conf = home / "pbs.conf"
    conf.write_text(f"PBS_EXEC={PBS_PREFIX}\nPBS_HOME={home}\nPBS_SERVER=localhost\nPBS_START_SERVER=0\n"
                    "PBS_START_SCHED=0\nPBS_START_COMM=0\nPBS_START_MOM=0\n")
    done = subprocess.run([str(PBSFS), *args], env={**os.environ, "PBS_CONF_FILE": str(conf)}, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, f"pbsfs {' '.join(args)}: {done.stderr}"
    return done.stdout


def _random_tree(rng: random.Random) -> tuple[str, list[str]]:
    """resource_group text (parents first) and the entity names."""
    lines, names, groups = [], [], ["root"]
    ident = 100
    for depth in range(1, rng.randint(2, 4) + 1):
        for _ in range(rng.randint(1, 3)):
            ident += 1
            name = f"g{depth}_{ident}" + (":x" if rng.random() < 0.2 else "")
            parent = rng.choice(groups[-3:])
            lines.append(f"{name} {ident} {parent} {rng.choice([0, 1, 5, 10, 25, 60])}")
            groups.append(name)
    for _ in range(rng.randint(3, 9)):
        ident += 1
        name = f"u{ident}" + (":a" if rng.random() < 0.15 else "")
        lines.append(f"{name} {ident} {rng.choice(groups)} {rng.choice([0, 1, 2, 10, 40])}")
        names.append(name)
    return "\n".join(lines) + "\n", names


def _folder(home: Path, to: Path) -> Path:
    """The files a PBS site publishes (what ``fairtop capture --pbs`` saves), from pbsfs's home."""
    to.mkdir(parents=True, exist_ok=True)
    for name in ("resource_group", "usage", "sched_config"):
        shutil.copy(home / "sched_priv" / name, to / name)
    return to


@pytest.mark.parametrize("seed", range(TREES))
def test_pbsfs_equals_fairtop_on_a_random_tree(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    text, names = _random_tree(rng)
    home = tmp_path / "home"
    (home / "sched_priv").mkdir(parents=True)
    (home / "sched_priv" / "resource_group").write_text(text)
    for name in names:
        if rng.random() < 0.8:  # some entities never get usage
            _pbsfs(home, "-s", name, str(rng.choice([1, 7, 100, 3600, 86400, 10**6, 123456789])))
    snap = load_pbs_folder(_folder(home, tmp_path / "published"))
    tree = snap.pbs
    assert tree is not None
    fs = compute(tree)
    compared = 0
    assert _pbsfs(home, "-p") == listing(tree, fs)  # every node's Grp, cgrp, shares, usage, percentage
    assert _pbsfs(home, "-t") == tree_text(tree)
    compared += 2 * len(tree.name)
    for name in names:
        assert _pbsfs(home, "-g", name) == entity(tree, name, fs), name
        compared += 1
    for _ in range(6):
        a, b = rng.sample(names, 2)
        assert _pbsfs(home, "-c", a, b) == compare(tree, a, b, fs), (a, b)
    # one decay by pbsfs (sched_config's fairshare_decay_factor, 0.5 by default) against fairtop's
    _pbsfs(home, "-d")
    decayed = load_pbs_folder(_folder(home, tmp_path / "decayed")).pbs
    assert decayed is not None
    # pbsfs writes the leaves' usage only; a group's is made again from its children when read
    leaves = np.setdiff1d(np.arange(len(tree.name)), tree.parent[tree.parent >= 0])
    assert np.array_equal(decayed.usage[leaves], decay_usage(tree.usage, 0.5)[leaves])
    assert _pbsfs(home, "-p") == listing(decayed)
    assert compared >= 2 * len(tree.name)


@pytest.mark.parametrize("seed", range(8))
def test_sched_config_settings_as_pbsfs_reads_them(seed: int, tmp_path: Path) -> None:
    """``unknown_shares`` (the unknown group's shares, so every percentage), ``fairshare_usage_res``
    (the units line) and ``fairshare_decay_factor`` (what ``-d`` multiplies by) in the folder's
    sched_config: pbsfs and fairtop agree; and ``report --pbs-resource-group/--pbs-usage`` on the
    binary usage file pbsfs wrote gives pbsfs's usage and percentages."""
    import json

    rng = random.Random(1000 + seed)
    text, names = _random_tree(rng)
    home = tmp_path / "home"
    (home / "sched_priv").mkdir(parents=True)
    (home / "sched_priv" / "resource_group").write_text(text)
    unknown, factor = rng.choice([0, 10, 40]), rng.choice([0.25, 0.7, 0.9])
    default = (PBS_PREFIX / "etc" / "pbs_sched_config").read_text() if PBS_PREFIX.exists() else ""
    (home / "sched_priv" / "sched_config").write_text(
        default.replace("fairshare_usage_res: cput", 'fairshare_usage_res: "ncpus*walltime"')
        .replace("fairshare_decay_factor: 0.5", f"fairshare_decay_factor: {factor}")
        + f"unknown_shares: {unknown}\n")
    for name in names:
        _pbsfs(home, "-s", name, str(rng.choice([3, 600, 86400, 10**7])))
    tree = load_pbs_folder(_folder(home, tmp_path / "published")).pbs
    assert tree is not None and tree.usage_res == "ncpus*walltime"
    assert int(tree.shares[list(tree.name).index("unknown")]) == unknown
    assert _pbsfs(home, "-p") == listing(tree)
    # the report from the two files alone (no sched_config: the unknown group's shares given)
    done = subprocess.run([sys.executable, "-m", "tui.cli", "report", "--pbs-resource-group",
                           str(home / "sched_priv" / "resource_group"), "--pbs-usage",
                           str(home / "sched_priv" / "usage"), "--pbs-unknown-shares", str(unknown),
                           "--format", "json"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    rows = {r["name"]: r for r in json.loads(done.stdout)}
    fs = compute(tree)
    for i, name in enumerate(tree.name):
        assert rows[str(name)]["usage"] == float(tree.usage[i])
        assert rows[str(name)]["percentage"] == float(percent_text(fs.tree_percentage[i]))  # as pbsfs -g prints
    _pbsfs(home, "-d")
    decayed = load_pbs_folder(_folder(home, tmp_path / "decayed")).pbs
    assert decayed is not None
    leaves = np.setdiff1d(np.arange(len(tree.name)), tree.parent[tree.parent >= 0])
    assert np.array_equal(decayed.usage[leaves], decay_usage(tree.usage, factor)[leaves])
