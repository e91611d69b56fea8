"""What the allowlist says of a command (`Kind` or `Doubt`), how it reads a program's
arguments, and the builders of the simple per-program checks (`plain`, `subcommands`...)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from seam.plugins.guardrail.command import Cmd
from seam.plugins.guardrail.grammar import long_matches

# read: only reads. add: creates something new and overwrites nothing (`mkdir -p`).
# run: runs the project's own tests, linters and builds (the sandbox contains them).
# write: changes, truncates, moves, removes or overwrites files: a person approves it.
Kind = Literal["read", "add", "run", "write"]
_RANK: dict[Kind, int] = {"read": 0, "add": 1, "run": 2, "write": 3}


@dataclass(frozen=True, slots=True)
class Doubt:
    rule: str
    reason: str


Judgement = Kind | Doubt
Check = Callable[[Cmd], Judgement]


def widest(a: Kind, b: Kind) -> Kind:
    return a if _RANK[a] >= _RANK[b] else b


def doubt(rule: str, reason: str) -> Doubt:
    return Doubt(f"allow:{rule}", reason)


UNKNOWN = doubt("unknown-program", "not a program the guard knows to be harmless")
ESCAPE = doubt("privilege", "runs with other privileges or outside the sandbox")
INLINE = doubt("inline-code", "runs inline code the guard cannot read")
STDIN = doubt("code-on-stdin", "runs a program read from its input")
EXECUTES = doubt("executes-arguments", "options that make it run other commands")
HISTORY = doubt("history", "changes or erases the shell history")


# --- reading arguments ---------------------------------------------------------------------


def has_option(cmd: Cmd, *options: str) -> bool:
    """Whether any of `options` (`-x` letters or `--long` names) is given."""
    letters, longs, _ = cmd.options
    for option in options:
        if option.startswith("--"):
            # `--compress-prog=sh` is `--compress-program`: any prefix counts.
            if any(long_matches(name, option) for name in longs):
                return True
        elif option[1:] in letters or (len(option) > 2 and option[1:] in longs):
            return True
    return False


def subcommand_index(args: tuple[str, ...], with_value: frozenset[str] = frozenset()) -> int:
    """The index of the first operand (the subcommand), skipping options and their values."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--" or not arg.startswith("-") or arg == "-":
            return i + (arg == "--")
        if arg in with_value:
            i += 1
        i += 1
    return i


def judged_words(args: tuple[str, ...], with_value: frozenset[str]) -> Iterator[str]:
    """Each word of `args` in order, but for an option in `with_value` and the value after
    it: options known to take a harmless value, so neither word needs judging."""
    i = 0
    while i < len(args):
        if args[i] in with_value:
            i += 2
            continue
        yield args[i]
        i += 1


def plain(kind: Kind, *banned: str) -> Check:
    """Any arguments, unless one of the `banned` options is given."""

    def check(cmd: Cmd) -> Judgement:
        return EXECUTES if banned and has_option(cmd, *banned) else kind

    return check


def writes_if(kind: Kind, *writing: str) -> Check:
    def check(cmd: Cmd) -> Judgement:
        return "write" if has_option(cmd, *writing) else kind

    return check


def no_prefix(kind: Kind, *prefixes: str) -> Check:
    """Like `plain`, for options spelled with one dash (`-eval`, `-shell-escape`) or glued
    to their value (`--plugin=x`)."""

    def check(cmd: Cmd) -> Judgement:
        for arg in cmd.args:
            if arg.startswith(prefixes) or any(long_matches(arg, p) for p in prefixes):
                return EXECUTES
        return kind

    return check


def formatter(check_flags: tuple[str, ...], write_flags: tuple[str, ...] = ()) -> Check:
    """A formatter rewrites files unless told only to check (`black --check`); one that
    only checks unless told to write (`prettier --write`) is given its `write_flags`."""

    def check(cmd: Cmd) -> Judgement:
        if write_flags:
            return "write" if has_option(cmd, *write_flags) else "run"
        return "run" if has_option(cmd, *check_flags) else "write"

    return check


def subcommands(allowed: dict[str, Kind], *, values: frozenset[str] = frozenset()) -> Check:
    """A tool whose first operand picks what it does (`cargo build`, `pip install`)."""

    def check(cmd: Cmd) -> Judgement:
        start = subcommand_index(cmd.args, values)
        if start >= len(cmd.args):
            return allowed.get("", doubt("subcommand", f"{cmd.name} without a known action"))
        sub = cmd.args[start]
        kind = allowed.get(sub)
        if kind is None:
            return doubt("subcommand", f"`{cmd.name} {sub}` is not known to be harmless")
        return kind

    return check


RUN: Kind = "run"
READ: Kind = "read"


def all_of(kind: Kind, *names: str) -> dict[str, Kind]:
    return dict.fromkeys(names, kind)


RUNS: Check = plain("run")
