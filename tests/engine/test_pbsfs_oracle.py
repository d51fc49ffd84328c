"""fairtop's PBS numbers against the real OpenPBS ``pbsfs`` (../shared/pbs-sandbox: OpenPBS master
cd7ab5e built from source, run on plain files as PBS_HOME, no server).

Seeded random trees (zero shares, empty groups, nesting to depth 4, entities never given usage,
names with ``:``); usage set with ``pbsfs -s`` (which writes the binary usage file), then for each
tree: the whole ``pbsfs -p`` listing, ``pbsfs -g`` of every entity (percentage,
fairshare_tree_usage, usage, usage/perc, the path from the root), ``pbsfs -c`` of random pairs,
``pbsfs -t``, and one ``pbsfs -d`` decay: every byte equal to fairtop's, which reads the files
pbsfs wrote (``fairtop --from`` / ``report --pbs-usage``). CI builds pbsfs (``.ci/pbs.sh``);
elsewhere these skip loudly without it, and fail as root in CI.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ROOT
from tui.engine.pbs import compute, decay_usage
from tui.formats.pbsfs import compare, entity, listing, tree_text
from tui.sources.pbs_folder import load_pbs_folder

PBS_PREFIX = Path(os.environ.get("PBS_PREFIX", "/opt/openpbs"))
PBSFS = PBS_PREFIX / "sbin" / "pbsfs"
SCRIPTS = Path(os.environ.get("FAIRTOP_PBS_SANDBOX", ROOT.parent / "shared" / "pbs-sandbox"))
IN_CI = os.geteuid() == 0 and bool(os.environ.get("CI"))
pytestmark = pytest.mark.skipif(not PBSFS.exists() and not IN_CI,
                                reason=f"no {PBSFS}: build it with ../shared/pbs-sandbox/build.sh (as root; CI does)")
TREES = 40


def _pbsfs(home: Path, *args: str) -> str:
    assert PBSFS.exists(), f"{PBSFS} missing: .ci/pbs.sh builds it"
    done = subprocess.run([str(SCRIPTS / "pbsfs.sh"), str(home), *args], capture_output=True, text=True, timeout=60)
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
