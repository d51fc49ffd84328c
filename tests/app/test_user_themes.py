"""A user adds a theme by dropping ``NAME.toml`` into ``$XDG_CONFIG_HOME/fairtop/themes``."""

from __future__ import annotations

from pathlib import Path

from tests.app.conftest import SIZE, ready
from tui import config

MINE = '''name = "mine"
dark = true
primary = "#ff00ff"
background = "#101010"
'''


async def test_a_theme_in_the_users_config_folder_is_offered_and_used(make_app, isolated_paths: Path) -> None:
    folder = isolated_paths / "config" / "fairtop" / "themes"
    assert config.user_theme_dir() == folder
    folder.mkdir(parents=True)
    (folder / "mine.toml").write_text(MINE)
    assert folder in config.theme_dirs()
    app = make_app(theme="mine")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(pilot)
        assert app.theme == "mine" and "mine" in app.fairtop_themes
        assert app.current_theme.primary == "#ff00ff"
        assert not [n for n in app._notifications if n.severity != "information"]
