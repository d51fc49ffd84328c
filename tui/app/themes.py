"""Themes from ``themes/*.toml``: parsed and validated here, registered by the app.

Parsing (:func:`parse_theme`) checks every key against a whitelist and every colour with
Textual's ``Color.parse``; :func:`to_textual_theme` builds the ``Theme`` object. A file that fails
is reported (the app shows a notice) and skipped; the app then falls back to ``dark``. Textual
is imported only inside the functions. The folders searched are :func:`tui.config.theme_dirs`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.config import theme_dirs

FALLBACK = "dark"
"""Theme used when the requested one is missing or broken."""
ORDER = ("dark", "light", "ansi16")
"""Cycle order of the shipped themes (others follow by name)."""
COLOUR_KEYS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground",
               "background", "surface", "panel", "boost")
OTHER_KEYS = {"name": str, "dark": bool, "ansi": bool, "luminosity_spread": float, "text_alpha": float,
              "variables": dict}


class ThemeError(ValueError):
    """A theme file that cannot be used."""


@dataclass(frozen=True)
class ThemeSpec:
    """A validated theme file, ready to become a ``textual.theme.Theme``."""

    name: str
    values: dict[str, Any]
    path: Path
    variables: dict[str, str] = field(default_factory=dict)


def _check_colour(value: Any, where: str) -> str:
    from textual.color import Color, ColorParseError

    if not isinstance(value, str):
        raise ThemeError(f"{where}: a colour must be a string, got {value!r}")
    try:
        Color.parse(value)
    except ColorParseError as exc:
        raise ThemeError(f"{where}: {exc}") from None
    return value


def parse_theme(path: Path) -> ThemeSpec:
    """Read one theme file; raises :class:`ThemeError` naming the file and key."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ThemeError(f"{path}: {exc}") from None
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key in COLOUR_KEYS:
            values[key] = _check_colour(value, f"{path}: {key}")
        elif key in OTHER_KEYS:
            want = OTHER_KEYS[key]
            if want is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if not isinstance(value, want) or (want is not bool and isinstance(value, bool)):
                raise ThemeError(f"{path}: {key} must be a {want.__name__}, got {value!r}")
            values[key] = value
        else:
            raise ThemeError(f"{path}: unknown key {key!r}")
    if "primary" not in values:
        raise ThemeError(f"{path}: 'primary' is required")
    variables = values.pop("variables", {})
    for key, value in variables.items():
        if not key.endswith("style"):  # e.g. input-cursor-text-style = "none" is not a colour
            _check_colour(value, f"{path}: variables.{key}")
    name = values.pop("name", path.stem)
    return ThemeSpec(name, values, path, variables)


def load_specs(dirs: list[Path] | None = None) -> tuple[list[ThemeSpec], list[str]]:
    """Every theme file in ``dirs`` (first one wins per name), and one message per bad file."""
    specs: dict[str, ThemeSpec] = {}
    errors: list[str] = []
    for folder in dirs if dirs is not None else theme_dirs():
        for path in sorted(folder.glob("*.toml")):
            try:
                spec = parse_theme(path)
            except ThemeError as exc:
                errors.append(str(exc))
                continue
            specs[spec.name] = spec  # a later folder (the user's) overrides a shipped theme
    return list(specs.values()), errors


def to_textual_theme(spec: ThemeSpec):  # noqa: ANN201 - textual.theme.Theme, imported lazily
    """The ``textual.theme.Theme`` for a spec."""
    from textual.theme import Theme

    return Theme(name=spec.name, variables=dict(spec.variables), **spec.values)
