"""Two clusters from one config: the status line names the one shown, ``c`` and ``:cluster NAME`` switch.

The clusters are real captures of two Slurm 22.05 clusters sharing one slurmdbd
(tests/fixtures/clusters/two_clusters).
"""

from __future__ import annotations

from pathlib import Path

from tests.app.conftest import SIZE, ready
from tests.conftest import FIXTURES
from tui.app.main import build_app
from tui.cli import build_parser

TWO = FIXTURES / "clusters" / "two_clusters"


def users(app) -> list[str]:  # noqa: ANN001 - FairtopApp
    tree = app.standing.snapshot.tree
    return [str(u) for u in tree.user if u and u != "root"]


def config(tmp_path: Path) -> Path:
    path = tmp_path / "clusters.toml"
    path.write_text(f'[[cluster]]\nname = "alpha"\nsource = "folder:{TWO / "alpha"}"\n\n'
                    f'[[cluster]]\nname = "beta"\nsource = "folder:{TWO / "beta"}"\n')
    return path


async def test_two_clusters_shown_and_switched(tmp_path: Path, isolated_paths: Path) -> None:
    app = build_app(build_parser().parse_args(["--config", str(config(tmp_path)), "--user", "carol"]))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(pilot)
        status = str(app.query_one("#status").render())
        assert status.startswith("cluster alpha (1/2) · snapshot ") and "8 associations" in status
        assert users(app) == ["carol", "alice", "bob"] and app.title == "fairtop · alpha"
        await pilot.press("c")
        await ready(pilot)
        assert str(app.query_one("#status").render()).startswith("cluster beta (2/2)")
        assert users(app) == ["dave", "erin", "frank"] and app.title == "fairtop · beta"
        assert "me: carol (not found)" in str(app.query_one("#status").render())  # carol has no beta account
        await pilot.press("colon", *"cluster alpha", "enter")
        await ready(pilot)
        assert users(app) == ["carol", "alice", "bob"] and app.standing.snapshot.cluster == "alpha"
        await pilot.press("colon", *"cluster gama", "enter")
        await ready(pilot)
        assert any("no cluster 'gama' (configured: alpha, beta)" in n.message for n in app._notifications)
        assert app.standing.snapshot.cluster == "alpha"


async def test_cluster_option_opens_that_one_first(tmp_path: Path, isolated_paths: Path) -> None:
    app = build_app(build_parser().parse_args(["--config", str(config(tmp_path)), "--cluster", "beta"]))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert users(app) == ["dave", "erin", "frank"]
        assert str(app.query_one("#status").render()).startswith("cluster beta (1/2)")


async def test_one_source_says_c_has_nowhere_to_go(make_app) -> None:  # noqa: ANN001
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(pilot)
        assert not str(app.query_one("#status").render()).startswith("cluster")
        await pilot.press("c")
        assert any("one cluster only" in n.message for n in app._notifications)
