"""The docs describe only commands and flags that exist (issue 27, item 4).

Every `fairtop ...` command line in README.md and docs/ (fenced code blocks and inline code) is
walked through the real parser, tui.cli.build_parser(): each subcommand must be one of its
parent's, and each `--flag` one that this (sub)command's --help lists. A lone `--flag` in inline
code must be a flag of some fairtop command. Lines of other commands (sacctmgr, pip, ssh, ...)
are not fairtop's and are left alone.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field
from pathlib import Path

from tui.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
INLINE = re.compile(r"`([^`]+)`")
ENV_ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=")
COMMAND_WORD = re.compile(r"^[a-z][a-z-]*$")  # a subcommand; DIR, plan.toml, 2>/dev/null are values


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@dataclass
class Findings:
    commands: int = 0
    flags: int = 0
    errors: list[str] = field(default_factory=list)


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def all_flags(parser: argparse.ArgumentParser) -> set[str]:
    flags = {s for a in parser._actions for s in a.option_strings}
    for child in subparsers(parser).values():
        flags |= all_flags(child)
    return flags


def snippets(markdown: str) -> list[str]:
    """Shell lines of the code blocks (continuations joined, prompts dropped), then inline code."""
    lines: list[str] = []
    for block in FENCE.findall(markdown):
        for line in block.replace("\\\n", " ").splitlines():
            lines.append(line.removeprefix("$ "))
    prose = FENCE.sub("", markdown)
    lines += [span.replace("\n", " ").replace("\\|", "|") for span in INLINE.findall(prose)]
    return lines


def shell_segments(line: str) -> list[str]:
    """Split at ; && || and a spaced | outside [...], so `[--from DIR | --slurm]` stays one command."""
    line = re.sub(r"(^|\s)#.*$", "", line)  # a comment
    segments, depth, start, i = [], 0, 0, 0
    while i < len(line):
        c = line[i]
        depth += (c == "[") - (c == "]")
        two = line[i:i + 2]
        if depth == 0 and (two in ("&&", "||") or c == ";" or line[i - 1:i + 2] == " | "):
            segments.append(line[start:i])
            i += 2 if two in ("&&", "||") else 1
            start = i
            continue
        i += 1
    segments.append(line[start:])
    return [s.strip() for s in segments if s.strip()]


def fairtop_args(segment: str) -> list[str] | None:
    """The arguments after `fairtop` (or ./dev demo, which passes them to fairtop), else None."""
    words = segment.split()
    while words and ENV_ASSIGNMENT.match(words[0]):
        words.pop(0)
    if not words:
        return None
    if words[0] == "fairtop" or words[0].endswith("/bin/fairtop"):
        is_message = len(words) > 1 and words[1].endswith(":")  # "fairtop serve-metrics: warning: ..."
        return None if is_message else words[1:]
    if words[:2] == ["./dev", "demo"]:
        return words[2:]
    return None


def check_command(parser: argparse.ArgumentParser, args: list[str], where: str, found: Findings) -> None:
    found.commands += 1
    path = ["fairtop"]
    tokens = [t.strip("[](){},") for t in args]
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token.startswith("--"):
            flag = token.split("=", 1)[0]
            found.flags += 1
            action = parser._option_string_actions.get(flag)
            if action is None:
                found.errors.append(f"{where}: `{' '.join(path)}` has no {flag} (`{' '.join(path)} --help`)")
                continue
            value = tokens[i] if i < len(tokens) else ""
            takes_value = action.nargs is None or action.nargs == 1 or (
                action.nargs == "?" and not value.startswith("-")
                and (action.choices is None or value in action.choices))
            if takes_value and "=" not in token:
                i += 1
            continue
        children = subparsers(parser)
        if token in children:
            parser = children[token]
            path.append(token)
        elif children and COMMAND_WORD.match(token) and not [
                a for a in parser._actions if not a.option_strings and not isinstance(a, argparse._SubParsersAction)]:
            found.errors.append(f"{where}: `{' '.join(path)}` has no command {token!r}")
            return


def check_markdown(markdown: str, name: str, parser: argparse.ArgumentParser | None = None) -> Findings:
    parser = parser or build_parser()
    known = all_flags(parser)
    found = Findings()
    for line in snippets(markdown):
        where = f"{name}: {' '.join(line.split())[:100]}"
        segments = shell_segments(line)
        for segment in segments:
            args = fairtop_args(segment)
            if args is not None:
                check_command(parser, args, where, found)
        if line.startswith("--"):  # a lone flag in the prose, e.g. `--share-with GROUP`
            flag = line.split()[0].split("=", 1)[0].rstrip(",.")
            found.flags += 1
            if flag not in known:
                found.errors.append(f"{where}: no fairtop command has {flag}")
    return found


def test_every_documented_command_and_flag_exists() -> None:
    parser = build_parser()
    total = Findings()
    for path in doc_files():
        found = check_markdown(path.read_text(), str(path.relative_to(ROOT)), parser)
        total.commands += found.commands
        total.flags += found.flags
        total.errors += found.errors
    print(f"checked {total.commands} fairtop command lines and {total.flags} flags in {len(doc_files())} files")
    assert total.errors == []
    # the walk really ran over the docs (a parsing slip that found nothing would pass otherwise)
    assert total.commands >= 150 and total.flags >= 180


def test_a_made_up_flag_or_command_is_named() -> None:
    markdown = (
        "Run `fairtop report --from DIR --format json` or `fairtop report --no-such-flag`.\n\n"
        "```sh\n$ fairtop serve --host 0.0.0.0 \\\n    --made-up 3\nfairtop reprot --from DIR\n"
        "fairtop --demo slurm history --days 3 | head -3   # fine\n"
        "FAIRTOP_ALLOC_TOKEN=x fairtop balance --url http://h:1 --projekt chem\n```\n"
        "A lone `--bogus-option` in the prose, and `sacctmgr show assoc --not-ours` which is not fairtop's.\n")
    found = check_markdown(markdown, "made-up.md")
    assert found.errors == [
        "made-up.md: fairtop serve --host 0.0.0.0 --made-up 3: "
        "`fairtop serve` has no --made-up (`fairtop serve --help`)",
        "made-up.md: fairtop reprot --from DIR: `fairtop` has no command 'reprot'",
        "made-up.md: FAIRTOP_ALLOC_TOKEN=x fairtop balance --url http://h:1 --projekt chem: "
        "`fairtop balance` has no --projekt (`fairtop balance --help`)",
        "made-up.md: fairtop report --no-such-flag: `fairtop report` has no --no-such-flag (`fairtop report --help`)",
        "made-up.md: --bogus-option: no fairtop command has --bogus-option",
    ]
    assert found.commands == 6  # report twice, serve, reprot, --demo ... history, balance


def test_the_readme_links_resolve() -> None:
    """mkdocs checks the site's links; README.md is not in the site, so its relative links are checked here."""
    readme = (ROOT / "README.md").read_text()
    targets = [t.split("#", 1)[0] for t in re.findall(r"\]\(([^)\s]+)\)", readme) if "://" not in t]
    assert len(targets) >= 20  # the tree's screenshot, the gallery and the "where to go next" pages
    assert [t for t in targets if not (ROOT / t).is_file()] == []
