"""fairtop's settings: typed, validated strictly, read from TOML files in a fixed precedence.

Precedence, lowest first (a later layer overrides single keys of an earlier one):

1. the defaults below;
2. ``/etc/fairtop/config.toml`` (site administrators);
3. the user file, ``$XDG_CONFIG_HOME/fairtop/config.toml`` (``platformdirs.user_config_path``);
4. the file named by the ``FAIRTOP_CONFIG`` environment variable;
5. the file given with ``--config``;
6. command-line flags (``--theme``, ``--user``, and a source flag from the registry).

Several clusters: ``[[cluster]]`` tables, each with a ``name`` and its own ``source`` (a later
file's list replaces an earlier one's). With them the app opens every listed cluster and switches
between them (``:cluster NAME``), and the reports take ``--cluster NAME|all``. A source flag on the
command line replaces them; ``--slurm --cluster a,b`` asks those clusters of the local slurmdbd.

Unknown keys and bad values are errors that name the file and suggest the key meant. fairtop
never writes these files; what it remembers (last theme, last source, saved what-if scenarios)
goes to ``$XDG_STATE_HOME/fairtop/state.toml``, written with tomli-w. No Textual here.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from platformdirs import user_config_path, user_state_path

from tui.security.file_modes import PRIVATE, PRIVATE_DIR, SecretFileError, make_dir, read_secret, write_atomic
from tui.sources import registry
from tui.sources.errors import InputError

if TYPE_CHECKING:  # the what-if modules and the engine pull in numpy: imported where used, not at start-up
    from tui.analysis.planner import Scenario
    from tui.engine.site_factor import SiteFactorParams

PACKAGE_DIR = Path(__file__).parent
"""The installed ``tui`` package, where the wheel puts ``themes/`` and ``config.example.toml``
(``importlib.resources.files("tui")`` gives the same folder, but importing it costs a start 11
modules, zipfile among them, ~70 file system calls)."""
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
    ``folder``, ``slurm``, ``slurmrestd``, ``pbs``). Given nowhere (no flag, no ``source`` in any
    file, no ``[[cluster]]``): the cluster fairtop runs on (:mod:`tui.sources.detect`)."""
    source_why: str = ""
    """Why this source: "" when a flag or a file named it, else what detection found (not a key)."""
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
    allocation_url: str | None = None
    """The allocation service (``fairtop serve-allocations``), e.g. ``http://alloc:8642``, or several
    instances on one ledger separated by commas (tried in order); the balances pane, ``fairtop
    balance`` and the Slurm hooks read it (``$FAIRTOP_ALLOC_URL`` overrides)."""
    allocation_auth: str = "munge"
    """How to prove who you are to the service: ``munge`` (a MUNGE credential from the local
    munged) or ``token`` (a bearer token from ``$FAIRTOP_ALLOC_TOKEN`` or ``allocation_token_file``)."""
    allocation_token_file: str | None = None
    """A file holding the bearer token, for ``allocation_auth = "token"``; mode 600: one its group
    or others may read is refused in one line, as ssh refuses a key."""
    allocation_timeout: float = 5.0
    """Seconds the pane waits for the service before showing the last balances as stale."""
    ca_file: str | None = None
    """The CA certificates (PEM) fairtop's clients verify an ``https://`` allocation service,
    ColdFront or slurmrestd against (the app, ``fairtop balance``, the Slurm hooks,
    ``publish-balances``, ``serve-metrics``' reader); None: the system's CAs
    (``$FAIRTOP_ALLOC_CA_FILE`` overrides, for the allocation service and ColdFront)."""
    tls_cert_file: str | None = None
    """The certificate (PEM, leaf then chain) ``serve-allocations`` and ``serve-metrics`` serve
    TLS with; with ``tls_key_file`` (``--tls-cert`` and ``--tls-key`` override them)."""
    tls_key_file: str | None = None
    """The certificate's private key (PEM; refused when others may read it)."""
    metrics_basic_auth_users: dict[str, str] = field(default_factory=dict)
    """``serve-metrics``' basic auth: user name -> ``pbkdf2-sha256$...`` hash (``fairtop
    hash-password`` makes one); empty: no auth. Give TLS too, or the password crosses in clear."""
    coldfront_url: str | None = None
    """A ColdFront site (its base URL, e.g. ``https://coldfront.example.edu``) whose REST API
    (``PLUGIN_API``) gives the user's allocations, read with their own token; https verified as
    ``ca_file`` says (``$FAIRTOP_COLDFRONT_URL`` overrides)."""
    coldfront_token_file: str | None = None
    """The file holding the user's ColdFront API token (their profile page, or ``coldfront
    drf_create_token USER``); mode 600, refused otherwise (``$FAIRTOP_COLDFRONT_TOKEN`` overrides)."""
    coldfront_published: str | None = None
    """The folder a ColdFront site's publisher (``fairtop allocations publish-coldfront``) writes
    every user's allocations into (``DIR/users/NAME/coldfront.json``, theirs alone): read when the
    user has no token of their own."""
    coldfront_public_attributes: tuple[str, ...] = ()
    """Usage attributes the site added and made public, shown beside ColdFront's public defaults
    (Core Usage (Hours), Accelerator Usage (Hours), Cloud Storage Quota (TB)). ColdFront's API does
    not say which attributes are private, so no other is shown to a user who is not staff."""
    ledger: str | None = None
    """The embedded ledger (an SQLite file, or ``postgresql://...``) read directly instead of, or
    beside, the service (``$FAIRTOP_ALLOC_DB`` overrides)."""
    site_factor: dict[str, Any] = field(default_factory=dict)
    """The seed-004 site factor: ``rule`` (``power`` or ``sigmoid``), ``n_credit``, ``n_temporal``,
    ``sigmoid_credit`` and ``sigmoid_temporal`` (``[l, x0]``), ``scale`` (SiteFactor = scale x s)."""

    cluster: tuple[ClusterEntry, ...] = ()
    """The ``[[cluster]]`` tables, in file order: several clusters, each with its own source."""


@dataclass(frozen=True)
class ClusterEntry:
    """One ``[[cluster]]`` table."""

    name: str
    """The cluster's name: the app's label, ``--cluster NAME``, and, for ``source = "slurm"``,
    the cluster asked (``sshare -M NAME``, ``scontrol -M NAME``, ``sacctmgr ... cluster=NAME``)."""
    source: str
    """A registry source name (``slurm``, ``folder``, ``demo``, ``slurmrestd``)."""
    value: str | None = None
    """Its value: the folder, the URL or socket, the demo kind."""


_TYPES: dict[str, tuple[type, ...]] = {
    "theme": (str,), "source": (str,), "demo": (str,), "folder": (str,), "slurmrestd": (str,),
    "refresh_rate": (int, float), "user": (str,), "read_only": (bool,), "keymap": (dict,),
    "allocation_url": (str,), "allocation_auth": (str,), "allocation_token_file": (str,),
    "allocation_timeout": (int, float), "ledger": (str,), "site_factor": (dict,), "ca_file": (str,),
    "tls_cert_file": (str,), "tls_key_file": (str,), "metrics_basic_auth_users": (dict,),
    "cluster": (list, tuple), "coldfront_url": (str,), "coldfront_token_file": (str,), "coldfront_published": (str,),
    "coldfront_public_attributes": (list, tuple),
}
_SITE_FACTOR_KEYS = {"rule": (str,), "n_credit": (int, float), "n_temporal": (int, float),
                     "sigmoid_credit": (list,), "sigmoid_temporal": (list,), "scale": (int,)}
_CLUSTER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""A Slurm cluster name (ClusterName is lowercased letters, digits, _ and -; dots for folders)."""


def current_user() -> str:
    """The Unix user running fairtop (``--user`` and ``user =`` override it)."""
    import getpass  # only when no user is given: not at every start

    try:
        return getpass.getuser()
    except Exception:  # no passwd entry, no env: a container without a user name
        return ""


def viewer(settings: Settings) -> str:
    """Whose standing to open on: ``--user``/``user =``, else the Unix user; on the demo its
    made-up stand-in, so made-up numbers never carry the user's own name."""
    if settings.user:
        return settings.user
    if settings.source == "demo" and not settings.cluster:
        from tui.sources.demo_names import DEMO_STAND_IN

        return DEMO_STAND_IN
    return current_user()


def user_theme_dir() -> Path:
    """Where a user adds themes: ``$XDG_CONFIG_HOME/fairtop/themes`` (one ``NAME.toml`` each)."""
    return user_config_path("fairtop", appauthor=False) / "themes"


def example_config() -> Path | None:
    """``config.example.toml`` (every option, commented): in the installed package, else the
    source checkout."""
    packaged = PACKAGE_DIR / "config.example.toml"
    if packaged.is_file():
        return packaged
    checkout = Path(__file__).resolve().parents[1] / "config.example.toml"
    return checkout if checkout.is_file() else None


def theme_dirs() -> list[Path]:
    """Folders holding theme files, later ones winning a name clash: the installed package's,
    the source checkout's, then the user's (``$XDG_CONFIG_HOME/fairtop/themes``)."""
    out = []
    packaged = PACKAGE_DIR / "themes"
    if packaged.is_dir():
        out.append(packaged)
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
    known = [f.name for f in fields(Settings) if f.name in _TYPES]  # source_why is found, not set
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
    if "allocation_auth" in table and table["allocation_auth"] not in ("munge", "token"):
        raise ConfigError(source, f"allocation_auth must be munge or token, got {table['allocation_auth']!r}")
    if "allocation_timeout" in table and not 0 < table["allocation_timeout"] <= 120:
        raise ConfigError(source, "allocation_timeout must be in (0, 120] seconds, "
                          f"got {table['allocation_timeout']!r}")
    _validate_site_factor(table.get("site_factor", {}), source)
    users = table.get("metrics_basic_auth_users", {})
    if users:
        from tui.security.passwords import is_hash  # hashlib and hmac: only for a config that has users
    for user, stored in users.items():
        if not isinstance(stored, str) or not is_hash(stored):
            raise ConfigError(source, f"metrics_basic_auth_users.{user} must be a hash made by 'fairtop "
                              "hash-password' (pbkdf2-sha256$...), never the password itself")
    names = table.get("coldfront_public_attributes", ())
    if not all(isinstance(n, str) and n for n in names):
        raise ConfigError(source, f"coldfront_public_attributes must be a list of attribute names, got {names!r}")
    if names:
        table["coldfront_public_attributes"] = tuple(names)
    for binding, keys in table.get("keymap", {}).items():
        if not isinstance(keys, str) or not keys.strip():
            raise ConfigError(source, f"keymap.{binding} must be a non-empty string of keys, got {keys!r}")
    if "cluster" in table and not all(isinstance(c, ClusterEntry) for c in table["cluster"]):
        table["cluster"] = cluster_entries(table["cluster"], source)
    return table


def _validate_site_factor(table: dict[str, Any], source: str) -> None:
    for key, value in table.items():
        if key not in _SITE_FACTOR_KEYS:
            close = difflib.get_close_matches(key, list(_SITE_FACTOR_KEYS), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(_SITE_FACTOR_KEYS)}"
            raise ConfigError(source, f"unknown key site_factor.{key}{hint}")
        if isinstance(value, bool) or not isinstance(value, _SITE_FACTOR_KEYS[key]):
            raise ConfigError(source, f"site_factor.{key} has the wrong type: {value!r}")
        if isinstance(value, list) and (len(value) != 2 or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
            raise ConfigError(source, f"site_factor.{key} must be [l, x0], got {value!r}")
    if table.get("rule", "power") not in ("power", "sigmoid"):
        raise ConfigError(source, f"site_factor.rule must be power or sigmoid, got {table['rule']!r}")


@dataclass(frozen=True)
class AllocationAccess:
    """Where the allocation ledger is and how to reach it (environment over config)."""

    url: str | None
    ledger: str | None
    token: str | None
    munge: bool
    timeout: float
    ca_file: str | None = None
    """The CAs an https service is verified against; None: the system's."""


def allocation_access(settings: Settings, env: Mapping[str, str] = os.environ) -> AllocationAccess:
    """``$FAIRTOP_ALLOC_URL``/``allocation_url``, ``$FAIRTOP_ALLOC_DB``/``ledger``,
    ``$FAIRTOP_ALLOC_AUTH``/``allocation_auth``, ``$FAIRTOP_ALLOC_CA_FILE``/``ca_file``; the token
    from ``$FAIRTOP_ALLOC_TOKEN`` or ``allocation_token_file`` (refused when its group or others
    may read it, as ssh refuses such a key)."""
    auth = env.get("FAIRTOP_ALLOC_AUTH") or settings.allocation_auth
    token = env.get("FAIRTOP_ALLOC_TOKEN")
    if auth == "token" and not token and settings.allocation_token_file:
        try:
            token = read_secret(settings.allocation_token_file, "token file")
        except SecretFileError as exc:
            raise ConfigError("allocation_token_file", str(exc)) from None
    return AllocationAccess(url=env.get("FAIRTOP_ALLOC_URL") or settings.allocation_url,
                            ledger=env.get("FAIRTOP_ALLOC_DB") or settings.ledger, token=token,
                            munge=auth == "munge", timeout=float(settings.allocation_timeout),
                            ca_file=env.get("FAIRTOP_ALLOC_CA_FILE") or settings.ca_file)


@dataclass(frozen=True)
class ColdFrontAccess:
    """Where ColdFront is and the user's token for it, or the folder its publisher writes."""

    url: str
    token: str
    timeout: float
    ca_file: str | None
    public: tuple[str, ...]
    """The site's further public usage attributes."""
    published: str | None = None
    """The publisher's folder, read instead of ColdFront (the user has no token)."""
    user: str = ""
    """Whose file to read there."""


def coldfront_access(settings: Settings, env: Mapping[str, str] = os.environ) -> ColdFrontAccess | None:
    """``$FAIRTOP_COLDFRONT_URL``/``coldfront_url`` with the token from ``$FAIRTOP_COLDFRONT_TOKEN``
    or ``coldfront_token_file`` (refused when its group or others may read it); without a token,
    the folder ``coldfront_published`` names; None when no ColdFront is configured. The timeout is
    ``allocation_timeout``, the CAs ``ca_file``'s."""
    url = env.get("FAIRTOP_COLDFRONT_URL") or settings.coldfront_url
    published = settings.coldfront_published
    if not url and not published:
        return None
    token = env.get("FAIRTOP_COLDFRONT_TOKEN")
    if not token and settings.coldfront_token_file:
        try:
            token = read_secret(settings.coldfront_token_file, "ColdFront token file")
        except SecretFileError as exc:
            raise ConfigError("coldfront_token_file", str(exc)) from None
    if not token and not published:
        raise ConfigError("coldfront_url", f"{url} needs a token: set coldfront_token_file (mode 600) to a file "
                          "holding your ColdFront API token (your ColdFront profile page shows it)")
    return ColdFrontAccess(url=url or str(published), token=token or "", timeout=float(settings.allocation_timeout),
                           ca_file=env.get("FAIRTOP_ALLOC_CA_FILE") or settings.ca_file,
                           public=tuple(settings.coldfront_public_attributes),
                           published=None if token else published, user="" if token else viewer(settings))


def site_factor_params(settings: Settings) -> SiteFactorParams:
    """The engine's parameters from the ``[site_factor]`` table (defaults: seed 004's)."""
    t = dict(settings.site_factor)
    for key in ("sigmoid_credit", "sigmoid_temporal"):
        if key in t:
            t[key] = (float(t[key][0]), float(t[key][1]))
    from tui.engine.site_factor import SiteFactorParams

    return SiteFactorParams(**t)

def cluster_entries(tables: list[Any], where: str) -> tuple[ClusterEntry, ...]:
    """Check the ``[[cluster]]`` tables: each a table with a unique ``name`` and a ``source``
    (``source = "folder:DIR"`` or ``folder = "DIR"``), keys known, the source's value given."""
    keys = ("name", "source", *(c.setting for c in registry.SOURCES.values() if c.setting))
    out: list[ClusterEntry] = []
    for i, raw in enumerate(tables, 1):
        at = f"[[cluster]] #{i}"
        if not isinstance(raw, dict):
            raise ConfigError(where, f"{at} must be a table (name = ..., source = ...), got {raw!r}")
        raw = expand_source(raw)
        for key, value in raw.items():
            if key not in keys:
                close = difflib.get_close_matches(key, keys, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(keys)}"
                raise ConfigError(where, f"{at}: unknown key {key!r}{hint}")
            if not isinstance(value, str):
                raise ConfigError(where, f"{at}: {key} must be a string, got {value!r}")
        name = raw.get("name", "")
        if not _CLUSTER_NAME.fullmatch(name) or name == "all":
            raise ConfigError(where, f"{at}: name must be a cluster name (letters, digits, _ . -; not 'all'), "
                                     f"got {name!r}")
        at = f"[[cluster]] {name!r}"
        if any(c.name == name for c in out):
            raise ConfigError(where, f"{at} is listed twice")
        if "source" not in raw:
            raise ConfigError(where, f'{at} needs a source, e.g. source = "slurm" or source = "folder:DIR"')
        try:
            validate({"source": raw["source"]}, where)
            cls = registry.source_class(raw["source"])
            value = raw.get(cls.setting) if cls.setting else None
            cls(value, "", MIN_REFRESH_S, name)
        except (ConfigError, ValueError) as exc:
            raise ConfigError(where, f"{at}: {getattr(exc, 'message', None) or exc}") from None
        stray = [k for k in raw if k not in ("name", "source", cls.setting)]
        if stray:
            raise ConfigError(where, f"{at}: {stray[0]} is not used by source = {raw['source']!r}")
        out.append(ClusterEntry(name, raw["source"], value))
    return tuple(out)


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


def load(config_arg: str | None = None, cli: dict[str, Any] | None = None, detect_source: bool = True) -> Settings:
    """Merge the layers into :class:`Settings`. A named file (env, ``--config``) must exist.

    ``cli`` holds flag values; None values are ignored. Without a source anywhere the cluster
    fairtop runs on is detected (``detect_source=False``: the demo, for a caller that reads no
    source).
    """
    merged: dict[str, Any] = {}
    for _, path, required in config_files(config_arg):
        if path.is_file() or required:
            table = read_file(path)
            keymap = {**merged.get("keymap", {}), **table.pop("keymap", {})}
            site = {**merged.get("site_factor", {}), **table.pop("site_factor", {})}
            merged.update(table, keymap=keymap, site_factor=site)
    merged.update({k: v for k, v in (cli or {}).items() if v is not None})
    validate(merged, "command line")
    why = ""
    if "source" not in merged and not merged.get("cluster") and detect_source:
        from tui.sources.detect import detect

        found = detect()
        merged["source"], why = found.source, found.why
    settings = replace(Settings(), **merged, source_why=why)
    try:
        make_source(settings)
    except ValueError as exc:
        raise ConfigError("config", str(exc)) from None
    return settings


def make_source(settings: Settings, me: str = "") -> registry.Source:
    """The configured source (ValueError when its value is missing or bad)."""
    cls = registry.source_class(settings.source)
    value = getattr(settings, cls.setting) if cls.setting else None
    source = cls(value, me, settings.refresh_rate)
    source.why = settings.source_why
    source.ca_file = settings.ca_file
    return source


def make_sources(settings: Settings, me: str = "", pick: str | None = None,
                 source_flag: bool = False) -> dict[str, registry.Source]:
    """Cluster name -> its source, the one to open first first.

    ``pick`` is ``--cluster``: a configured cluster's name; with ``source_flag`` (a source given
    on the command line, which replaces ``[[cluster]]``) or without ``[[cluster]]`` tables, names
    (``a,b``) that live Slurm asks with ``-M``. Without either: the one configured source, "".
    Raises ConfigError for an unknown name.
    """
    if settings.cluster and not source_flag:
        by_name = {c.name: c for c in settings.cluster}
        names = list(by_name)
        if pick:
            if pick not in by_name:
                close = difflib.get_close_matches(pick, names, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise ConfigError("--cluster", f"no [[cluster]] named {pick!r} (configured: {', '.join(names)}){hint}")
            names.remove(pick)
            names.insert(0, pick)
        return _with_ca({n: registry.make(by_name[n].source, by_name[n].value, me, settings.refresh_rate, n)
                         for n in names}, settings)
    if not pick:
        return {"": make_source(settings, me)}
    names = [n.strip() for n in pick.split(",")]
    bad = next((n for n in names if not _CLUSTER_NAME.fullmatch(n) or n == "all"), None)
    if bad is not None:
        raise ConfigError("--cluster", f"takes cluster names separated by commas, not {pick!r}")
    if settings.source != "slurm" and len(names) > 1:
        raise ConfigError("--cluster", f"several clusters need live Slurm (--slurm) or [[cluster]] tables, "
                                       f"not source {settings.source!r}")
    cls = registry.source_class(settings.source)
    value = getattr(settings, cls.setting) if cls.setting else None
    return _with_ca({n: cls(value, me, settings.refresh_rate, n) for n in names}, settings)


def _with_ca(sources: dict[str, registry.Source], settings: Settings) -> dict[str, registry.Source]:
    """The sources, each told ``ca_file`` (an https slurmrestd is verified against it)."""
    for source in sources.values():
        source.ca_file = settings.ca_file
    return sources


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


def load_named_scenarios(path: Path | None = None) -> list[tuple[str, Scenario | InputError]]:
    """The what-if scenarios saved in the state file (a damaged one as its error)."""
    from tui.analysis.planner import stored_scenarios

    return stored_scenarios(load_state(path).scenarios)


def save_named_scenario(name: str, scenario: Scenario, path: Path | None = None) -> Path:
    """Save ``scenario`` under ``name`` in the state file (replacing one of that name)."""
    from tui.analysis.planner import store_scenario

    state = load_state(path)
    state.scenarios = store_scenario(state.scenarios, name, scenario)
    return save_state(state, path)


def delete_named_scenario(name: str, path: Path | None = None) -> Path:
    """Remove the scenario called ``name`` from the state file."""
    from tui.analysis.planner import drop_scenario

    state = load_state(path)
    state.scenarios = drop_scenario(state.scenarios, name)
    return save_state(state, path)


def save_state(state: State, path: Path | None = None) -> Path:
    """Write the state file with tomli-w, atomically and private to the user (0600, in a 0700
    folder when fairtop creates it): saved scenarios name accounts and users."""
    path = path or state_file()
    make_dir(path.parent, PRIVATE_DIR)
    data = {k: v for k, v in vars(state).items() if v is not None}
    import tomli_w  # writing the state file only: not at every start

    write_atomic(path, tomli_w.dumps(data), PRIVATE)
    return path
