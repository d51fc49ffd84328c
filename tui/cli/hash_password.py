"""``fairtop hash-password [USER]``: a password's salted hash (:mod:`tui.security.passwords`) for the
config's ``[metrics_basic_auth_users]``."""

from __future__ import annotations

import argparse
import sys

from tui.sources.errors import InputError


def add_parser(sub: argparse._SubParsersAction) -> None:
    pw = sub.add_parser("hash-password", help="the hash of a password for metrics_basic_auth_users",
                        description="Read a password (from the terminal, twice; or one line of stdin) and print "
                                    "its salted PBKDF2-SHA256 hash for the config's [metrics_basic_auth_users].")
    pw.add_argument("user", nargs="?", default="prometheus", help="the user name to print the line for "
                    "(default prometheus)")


def run(args: argparse.Namespace) -> int:
    """``fairtop hash-password [USER]``: ``USER = "pbkdf2-sha256$..."`` for the config."""
    import getpass

    from tui.security.passwords import hash_password

    if sys.stdin.isatty():
        password = getpass.getpass("password: ")
        if getpass.getpass("again: ") != password:
            raise InputError("hash-password", "the two passwords differ")
    else:
        password = sys.stdin.readline().rstrip("\n")
    if not password:
        raise InputError("hash-password", "an empty password")
    print(f'{args.user} = "{hash_password(password)}"')
    return 0
