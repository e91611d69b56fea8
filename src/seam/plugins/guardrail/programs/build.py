"""Build tools: make, cmake, cargo and the ruff linter/formatter."""

from __future__ import annotations

import re

from seam.plugins.guardrail.command import Cmd
from seam.plugins.guardrail.programs.base import (
    EXECUTES,
    READ,
    RUN,
    Judgement,
    all_of,
    doubt,
    has_option,
    judged_words,
    subcommand_index,
    subcommands,
)


def ruff(cmd: Cmd) -> Judgement:
    start = subcommand_index(cmd.args)
    sub = cmd.args[start] if start < len(cmd.args) else ""
    if sub == "format":
        return "run" if has_option(cmd, "--check", "--diff") else "write"
    return "write" if has_option(cmd, "--fix", "--unsafe-fixes", "--add-noqa") else "run"


_MAKE_OK_VALUES = frozenset({"-j", "--jobs", "-l", "--load-average", "-C", "--directory", "-o"})
_MAKE_OK_FLAGS = frozenset(
    {"-k", "-s", "-n", "-B", "-q", "-i", "-w", "--no-print-directory", "--keep-going"}
    | {"--silent", "--dry-run", "--always-make", "--question", "-r", "-R", "-d", "--debug"}
)


def make(cmd: Cmd) -> Judgement:
    """Plain `make [targets]` runs the project's Makefile; `-f` and variable overrides
    (`make CC='rm -rf ~'`) or `--eval` make it run what its arguments say."""
    for arg in judged_words(cmd.args, _MAKE_OK_VALUES):
        if re.fullmatch(r"-j\d*|--jobs=\d+|-C.+|--directory=.+|-l[\d.]*", arg):
            continue
        if arg.startswith("-") and arg not in _MAKE_OK_FLAGS:
            return EXECUTES
        if "=" in arg:
            return doubt("make-variable", "a make variable can change the commands it runs")
        if arg in _MAKE_WRITES:
            return "write"
    return "run"


# Targets whose names say they remove, install or publish.
_MAKE_WRITES = frozenset(
    {"clean", "distclean", "mrproper", "realclean", "clobber", "install", "uninstall"}
    | {"deploy", "release", "publish", "upload", "push", "purge", "reset", "nuke"}
)


_CARGO_SUBCOMMANDS = subcommands(
    {
        **all_of(RUN, "build", "b", "test", "t", "run", "r", "check", "c", "clippy", "doc"),
        **all_of(RUN, "bench", "tree", "nextest"),
        **all_of("write", "add", "remove", "update", "new", "init", "install", "fix", "fmt"),
        **all_of(READ, "metadata", "search", "--version", "version", "help", ""),
        "clean": "write",
    },
    values=frozenset({"--manifest-path", "-C"}),
)


def cargo(cmd: Cmd) -> Judgement:
    # --config can set a runner (`target.x.runner`) that `cargo run` and `test` execute.
    if has_option(cmd, "--config", "-Z"):
        return EXECUTES
    if "fmt" in cmd.args and has_option(cmd, "--check"):
        return "run"
    return _CARGO_SUBCOMMANDS(cmd)
