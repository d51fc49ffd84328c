"""fairtop's settings: typed, validated strictly, read from TOML files in a fixed precedence.

Precedence, lowest first (a later layer overrides single keys of an earlier one):

1. the defaults below;
2. ``/etc/fairtop/config.toml`` (site administrators);
3. the user file, ``$XDG_CONFIG_HOME/fairtop/config.toml`` (``platformdirs.user_config_path``);
4. the file named by the ``FAIRTOP_CONFIG`` environment variable;
5. the file given with ``--config``;
6. command-line flags (``--theme``, ``--user``, and a source flag from the registry).

Unknown keys and bad values are errors that name the file and suggest the key meant. fairtop
never writes these files; what it remembers (last theme, last source, saved what-if scenarios)
goes to ``$XDG_STATE_HOME/fairtop/state.toml``, written with tomli-w. No Textual here.
"""

from __future__ import annotations

import difflib
import getpass
import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from importlib.resources import files
from pathlib import Path
from typing import Any

import tomli_w
from platformdirs import user_config_path, user_state_path

from tui.sources import registry
from tui.sources.errors import InputError

SYSTEM_FILE = Path("/etc/fairtop/config.toml")
"""Site-wide config file (read if it exists)."""
ENV_VAR = "FAIRTOP_CONFIG"
MIN_REFRESH_S = 2.0


class ConfigError(InputError):
    """A config file that cannot be used; the CLI prints it on one line and exits 2."""


@dataclass(frozen=True)
class Settings:
    """Everything a user can configure."""

    theme: str | None = None
    """Theme name (a file in ``themes/`` or a Textual theme); None: the last one used, else ``dark``."""
    source: str = "demo"
    """Where data comes from: a name from :data:`tui.sources.registry.SOURCES` (``demo``,
    ``folder``, ``slurm``, ``slurmrestd``)."""
    demo: str = "slurm"
    """Which built-in demo cluster when ``source = "demo"``: ``slurm`` or ``pbs``."""
    folder: str | None = None
    """The folder of saved command outputs when ``source = "folder"``."""
    slurmrestd: str | None = None
    """slurmrestd to read when ``source = "slurmrestd"``: a unix socket path or an http(s) URL
    (a JWT comes from ``$SLURM_JWT``)."""
    refresh_rate: float = 30.0
    """Seconds between reads of a live source's jobs (squeue, sprio); at least 2. sshare is read
    once per PriorityCalcPeriod and sacctmgr every 10 minutes whatever this says."""
    user: str | None = None
    """The user to highlight and jump to; None: the Unix user."""
    read_only: bool = True
    """Never change anything on the cluster or in the allocation ledger (the default)."""
    keymap: dict[str, str] = field(default_factory=dict)
    """Binding id -> keys, e.g. ``me = "ctrl+m,m"`` (ids are listed by ``?`` in the app)."""


_TYPES: dict[str, tuple[type, ...]] = {
    "theme": (str,), "source": (str,), "demo": (str,), "folder": (str,), "slurmrestd": (str,),
    "refresh_rate": (int, float), "user": (str,), "read_only": (bool,), "keymap": (dict,),
}


def current_user() -> str:
    """The Unix user running fairtop (``--user`` and ``user =`` override it)."""
    try:
        return getpass.getuser()
    except Exception:  # no passwd entry, no env: a container without a user name
        return ""


def user_theme_dir() -> Path:
    """Where a user adds themes: ``$XDG_CONFIG_HOME/fairtop/themes`` (one ``NAME.toml`` each)."""
    return user_config_path("fairtop", appauthor=False) / "themes"


def example_config() -> Path | None:
    """``config.example.toml`` (every option, commented): in the installed package, else the
    source checkout."""
    packaged = files("tui") / "config.example.toml"
    if packaged.is_file():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[1] / "config.example.toml"
    return checkout if checkout.is_file() else None


def theme_dirs() -> list[Path]:
    """Folders holding theme files, later ones winning a name clash: the installed package's,
    the source checkout's, then the user's (``$XDG_CONFIG_HOME/fairtop/themes``)."""
    out = []
    packaged = files("tui") / "themes"
    if packaged.is_dir():
        out.append(Path(str(packaged)))
    checkout = Path(__file__).resolve().parents[1] / "themes"
    if checkout.is_dir() and checkout not in out:
        out.append(checkout)
    mine = user_theme_dir()
    if mine.is_dir():
        out.append(mine)
    return out


def user_file() -> Path:
    """The user's config file (it need not exist)."""
    return user_config_path("fairtop", appauthor=False) / "config.toml"


def state_file() -> Path:
    """Where fairtop keeps its own state."""
    return user_state_path("fairtop", appauthor=False) / "state.toml"


def expand_source(table: dict[str, Any]) -> dict[str, Any]:
    """``source = "folder:/var/cache/fairtop/current"`` is short for ``source = "folder"`` plus
    ``folder = "..."`` (any source that takes a value: ``slurmrestd:URL``, ``demo:pbs``)."""
    value = table.get("source")
    if isinstance(value, str) and ":" in value:
        name, _, rest = value.partition(":")
        cls = registry.SOURCES.get(name)
        if cls is not None and cls.setting:
            return {**table, "source": name, cls.setting: rest}
    return table


def validate(table: dict[str, Any], source: str) -> dict[str, Any]:
    """Check one file's table: known keys, right types, allowed values. Returns it unchanged."""
    known = [f.name for f in fields(Settings)]
    for key, value in table.items():
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(known)}"
            raise ConfigError(source, f"unknown key {key!r}{hint}")
        if isinstance(value, bool) and bool not in _TYPES[key] or not isinstance(value, _TYPES[key]):
            want = " or ".join(t.__name__ for t in _TYPES[key])
            raise ConfigError(source, f"{key} must be a {want}, got {value!r}")
    names = list(registry.SOURCES)
    if "source" in table and table["source"] not in names:
        close = difflib.get_close_matches(table["source"], names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(source, f"source must be one of {', '.join(names)}, got {table['source']!r}{hint}")
    if "demo" in table and table["demo"] not in registry.DemoSource.choices:
        choices = ", ".join(registry.DemoSource.choices)
        raise ConfigError(source, f"demo must be one of {choices}, got {table['demo']!r}")
    if "refresh_rate" in table and not table["refresh_rate"] >= MIN_REFRESH_S:
        raise ConfigError(source, f"refresh_rate must be >= {MIN_REFRESH_S:g} seconds, got {table['refresh_rate']!r}")
    for binding, keys in table.get("keymap", {}).items():
        if not isinstance(keys, str) or not keys.strip():
            raise ConfigError(source, f"keymap.{binding} must be a non-empty string of keys, got {keys!r}")
    return table


def read_file(path: Path) -> dict[str, Any]:
    """Read and validate one config file."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(str(path), exc.strerror or str(exc)) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(str(path), f"not valid TOML: {exc}") from None
    return validate(expand_source(data), str(path))


def config_files(config_arg: str | None = None) -> list[tuple[str, Path, bool]]:
    """(layer, path, required) in precedence order, lowest first."""
    files = [("system", SYSTEM_FILE, False), ("user", user_file(), False)]
    if os.environ.get(ENV_VAR):
        files.append((f"${ENV_VAR}", Path(os.environ[ENV_VAR]).expanduser(), True))
    if config_arg:
        files.append(("--config", Path(config_arg).expanduser(), True))
    return files


def load(config_arg: str | None = None, cli: dict[str, Any] | None = None) -> Settings:
    """Merge the layers into :class:`Settings`. A named file (env, ``--config``) must exist.

    ``cli`` holds flag values; None values are ignored.
    """
    merged: dict[str, Any] = {}
    for _, path, required in config_files(config_arg):
        if path.is_file() or required:
            table = read_file(path)
            keymap = {**merged.get("keymap", {}), **table.pop("keymap", {})}
            merged.update(table, keymap=keymap)
    merged.update({k: v for k, v in (cli or {}).items() if v is not None})
    validate(merged, "command line")
    settings = replace(Settings(), **merged)
    try:
        make_source(settings)
    except ValueError as exc:
        raise ConfigError("config", str(exc)) from None
    return settings


def make_source(settings: Settings, me: str = "") -> registry.Source:
    """The configured source (ValueError when its value is missing or bad)."""
    cls = registry.source_class(settings.source)
    value = getattr(settings, cls.setting) if cls.setting else None
    return cls(value, me, settings.refresh_rate)


def cli_overrides(args: Any) -> dict[str, Any]:
    """Settings given on the command line (argparse namespace from :mod:`tui.cli`)."""
    out: dict[str, Any] = {"theme": getattr(args, "theme", None), "user": getattr(args, "user", None)}
    for cls in registry.SOURCES.values():
        value = getattr(args, f"source_{cls.name}", None)
        if value is None or value is False:
            continue
        out["source"] = cls.name
        if cls.setting and isinstance(value, str):
            out[cls.setting] = value
    return out


def _file_status(path: Path, required: bool) -> str:
    """"valid", "INVALID: why", or "not found" (with "required" for a file that was named)."""
    if not path.is_file():
        return "not found, but named: fairtop will not start" if required else "not found"
    try:
        read_file(path)
    except ConfigError as exc:
        return f"INVALID: {exc.message}"
    return "valid"


def describe_paths(config_arg: str | None = None) -> str:
    """What ``fairtop info`` prints: every file fairtop reads or writes, and whether it exists."""
    lines = ["config files (later ones override earlier ones):"]
    for layer, path, required in config_files(config_arg):
        lines.append(f"  {layer:<10} {path}  ({_file_status(path, required)})")
    if not os.environ.get(ENV_VAR):
        lines.append(f"  (set ${ENV_VAR} to add a file)")
    lines.append(f"state file:   {state_file()}  ({'found' if state_file().is_file() else 'not written yet'})")
    example = example_config()
    lines.append(f"example:      {example}  (every option, commented)" if example else "example:      (not installed)")
    lines.append("theme folders (a later one wins a name clash):")
    mine = user_theme_dir()
    lines += [f"  {d}" + ("  (yours)" if d == mine else "") for d in theme_dirs()]
    if not mine.is_dir():
        lines.append(f"  {mine}  (yours, not created yet: add NAME.toml files there, as themes/dark.toml)")
    return "\n".join(lines) + "\n"


@dataclass
class State:
    """What fairtop remembers between runs (app-owned, rewritten freely)."""

    last_theme: str | None = None
    """Theme in use when fairtop last quit."""
    last_source: str | None = None
    """``demo``, ``slurm`` or ``folder:DIR``."""
    scenarios: list[dict[str, Any]] = field(default_factory=list)
    """Saved what-if scenarios, as the what-if pane stores them."""


def load_state(path: Path | None = None) -> State:
    """Read the state file; a missing or damaged one gives an empty state (it is only a memory)."""
    path = path or state_file()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return State()
    known = {f.name for f in fields(State)}
    return State(**{k: v for k, v in data.items() if k in known})


def save_state(state: State, path: Path | None = None) -> Path:
    """Write the state file with tomli-w (atomically: write a sibling, then rename)."""
    path = path or state_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {k: v for k, v in vars(state).items() if v is not None}
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(tomli_w.dumps(data), encoding="utf-8")
    tmp.replace(path)
    return path
