"""Interpreters, compilers and JavaScript runtimes: a script file runs the project's code,
inline code or a program on stdin cannot be read."""

from __future__ import annotations

import re

from seam.plugins.guardrail.command import Cmd
from seam.plugins.guardrail.grammar import long_matches
from seam.plugins.guardrail.programs.base import (
    EXECUTES,
    INLINE,
    STDIN,
    Check,
    Judgement,
    doubt,
    has_option,
    judged_words,
    subcommand_index,
)


def compiler(cmd: Cmd) -> Judgement:
    """A C compiler builds the project; `-wrapper`, plugins and `-B` swap in other programs."""
    if any(a.startswith(("-wrapper", "-fplugin", "-B", "-specs", "--specs")) for a in cmd.args):
        return EXECUTES
    return "run"


def bun(cmd: Cmd) -> Judgement:
    if has_option(cmd, "-e", "--eval", "-p", "--print"):
        return INLINE
    return "run"


def deno(cmd: Cmd) -> Judgement:
    start = subcommand_index(cmd.args)
    sub = cmd.args[start] if start < len(cmd.args) else ""
    if sub in ("eval", "repl", "") or has_option(cmd, "--eval"):
        return INLINE
    return "run"


def js_package_manager(cmd: Cmd) -> Judgement:
    """yarn/pnpm run the project's scripts; `exec`/`node` run whatever their arguments say
    (the classifier judges `exec`'s command on its own)."""
    start = subcommand_index(cmd.args)
    sub = cmd.args[start] if start < len(cmd.args) else ""
    if sub == "node":
        return doubt("inline-code", "runs node with arguments the guard cannot read")
    if sub == "publish":
        return doubt("publish", "publishes a package")
    if sub in _JS_INSTALLS:
        return "write"  # node_modules, the lockfile, and install scripts that run
    return "run"


_JS_INSTALLS = frozenset(
    {"", "install", "i", "add", "remove", "rm", "up", "upgrade", "update", "import", "link"}
    | {"unlink", "dedupe", "prune", "patch-commit", "set", "config", "init", "create", "dlx"}
)


def npx(cmd: Cmd) -> Judgement:
    """`npx TOOL ...` runs a package's tool; a formatter's or fixer's write flag writes."""
    if any(a.startswith(("-c", "--call")) or long_matches(a, "--call") for a in cmd.args):
        return EXECUTES
    return "write" if has_option(cmd, "--write", "-w", "--fix") else "run"


_PYTHON_VALUES = frozenset({"-W", "-X", "--check-hash-based-pycs"})
PYTHON = re.compile(r"(?:python|pypy)(?:[23](?:\.\d+)?)?t?")


def python(cmd: Cmd) -> Judgement:
    for arg in judged_words(cmd.args, _PYTHON_VALUES):
        if arg == "-m" or (arg.startswith("-") and not arg.startswith("--") and "m" in arg):
            return "run"  # a module: `python -m pytest`, `python -m json.tool`
        if arg == "-c" or (arg.startswith("-") and not arg.startswith("--") and "c" in arg):
            return INLINE
        if arg == "-" or not arg.startswith("-"):
            return STDIN if arg == "-" else "run"
        if arg in ("--version", "-V", "--help", "-h"):
            return "read"
    return STDIN


def script_language(inline: str, long_inline: tuple[str, ...] = ()) -> Check:
    """node, perl, ruby, php...: a script file runs the project's code; inline code or a
    program on stdin cannot be read."""

    def check(cmd: Cmd) -> Judgement:
        for arg in cmd.args:
            if arg.partition("=")[0] in long_inline:
                return INLINE
            if arg.startswith("-") and not arg.startswith("--") and set(arg[1:]) & set(inline):
                return INLINE
            if arg in ("--version", "-v", "--help", "-h", "-V"):
                return "read"
            if arg == "-":
                return STDIN
            if not arg.startswith("-"):
                return "run"
        return STDIN

    return check
