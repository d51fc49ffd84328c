"""``fairtop serve-metrics``: the fairshare tree and allocations served to Prometheus (OpenMetrics),
its sources checked in the terminal first; a PrivateData cluster only behind basic auth or an
explicit flag."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping

from tui.cli.service_flags import listen_option, service_tls, tls_options
from tui.cli.source_flags import app_options
from tui.sources import registry
from tui.sources.errors import InputError


def add_parser(sub: argparse._SubParsersAction) -> None:
    met = sub.add_parser("serve-metrics", help="serve the fairshare tree and allocations to Prometheus (OpenMetrics)",
                         description="GET /metrics: every association (or PBS entity), allocation, pending jobs "
                                     "per account, the scheduler's release and the snapshot's age, from the source "
                                     "options' snapshot, or of every [[cluster]] of the config (a published folder "
                                     "is re-read every refresh_rate; a scrape never reads the source). 503 with the "
                                     "reason until a snapshot is read. --cluster NAME: the cluster label of a single "
                                     "source (default: its own: ClusterName, a PBS folder's name); with --slurm, "
                                     "the clusters asked with -M (a,b).")
    listen_option(met, 9842)
    tls_options(met)
    met.add_argument("--allow-private-data", action="store_true",
                     help="serve a PrivateData cluster's every user's usage without basic auth anyway (an explicit "
                          "choice: whoever reaches the port reads what sshare refuses them)")
    app_options(met, again=True)


def run(args: argparse.Namespace) -> int:
    """``fairtop serve-metrics``: every cluster's source (the config's ``[[cluster]]`` tables, or
    the one source, ``--cluster`` naming its label or live Slurm's ``-M`` clusters); a bad source
    or config fails here in one line; then serve."""
    from tui import config
    from tui.metrics.server import MetricsState, allocation_readers, make_server, serve_metrics
    from tui.security.passwords import PasswordCheck
    from tui.security.tls import clear_text_warning

    overrides = config.cli_overrides(args)
    settings = config.load(getattr(args, "config", None), overrides)
    try:
        sources = config.make_sources(settings, settings.user or "", getattr(args, "cluster", None),
                                      source_flag="source" in overrides)
    except ValueError as exc:
        raise InputError("fairtop serve-metrics", str(exc)) from None
    for source in sources.values():
        source.check()
    readers = allocation_readers(config.allocation_access(settings), config.coldfront_access(settings))
    tls = service_tls(args, settings)
    users = PasswordCheck(settings.metrics_basic_auth_users) if settings.metrics_basic_auth_users else None
    if users is None and not args.allow_private_data:
        _refuse_private_metrics(sources)
    host, port = args.listen
    state = MetricsState()
    try:
        server = make_server(state, host, port, tls[1] if tls else None, users)
    except OSError as exc:
        print(f"fairtop serve-metrics: cannot listen on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    if tls is None:
        clear_text_warning("serve-metrics", host, server.server_address[1],
                           "every user's usage" + (" and the basic-auth password" if users else ""))

    def ready(what: str) -> None:
        scheme = "https" if tls else "http"
        auth = f", basic auth: {len(users.users)} user(s)" if users else ""
        print(f"fairtop: metrics on {scheme}://{host}:{server.server_address[1]}/metrics ({what}{auth})", flush=True)

    serve_metrics(server, state, sources, readers, settings.refresh_rate, ready)
    return 0


def _refuse_private_metrics(sources: Mapping[str, registry.Source]) -> None:
    """A cluster whose PrivateData hides usage, jobs, users or accounts is not served to whoever
    reaches the port: basic auth (``metrics_basic_auth_users``) first, or an explicit flag."""
    from tui.sources.private_data import HIDES

    for name, source in sources.items():
        snap = source.load()  # a published folder's read is kept: the first scrape reads nothing again
        hides = set(snap.private_data) & set(HIDES)
        if hides:
            raise InputError("fairtop serve-metrics", f"{name or snap.cluster or 'the source'} sets PrivateData="
                             f"{','.join(sorted(hides))}: the metrics carry every user's usage, so set "
                             "metrics_basic_auth_users (and TLS) in the config, or pass --allow-private-data")
