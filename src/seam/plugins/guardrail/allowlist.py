"""What `safe` means: a known program with known-harmless arguments, nothing else.

A pattern list says what is dangerous and lets everything else through, so the next
disguise walks past it. This is the other way round (as OpenAI's Codex CLI judges
commands): each program the guard knows has a rule for its arguments, and `prove`
returns what a command does when the rule holds: `read` (only reads), `write` (writes
files) or `run` (runs the project's own code or tools, which the sandbox contains).
Anything else is a `Doubt`: an unknown program, a program run by path, inline code for
an interpreter, options that make a program execute its arguments, privilege and
container escapes. A doubt needs the person's approval; it is never `safe`.

Commands a wrapper runs (`env X cmd`, `xargs cmd`, `find -exec cmd`, `sh -c '...'`) are
judged on their own by the classifier; here a wrapper is only judged for its own options.

The checks live in `programs/`, one module per family of programs; which check judges
which program is the table in `allowlist_data.py`.
"""

from __future__ import annotations

import re

from seam.plugins.guardrail.allowlist_data import ANY_ARGUMENTS, ESCAPES, PROGRAMS
from seam.plugins.guardrail.command import Cmd
from seam.plugins.guardrail.grammar import unknown_long
from seam.plugins.guardrail.options import LONG_OPTIONS, NEGATABLE
from seam.plugins.guardrail.programs.base import (
    ESCAPE,
    UNKNOWN,
    Check,
    Doubt,
    Judgement,
    Kind,
    doubt,
    plain,
    widest,
)
from seam.plugins.guardrail.programs.interpreters import PYTHON, python
from seam.plugins.guardrail.programs.shell_builtins import risky_assignment
from seam.plugins.guardrail.programs.text import sed_script_harmless

__all__ = [
    "ANY_ARGUMENTS",
    "ESCAPES",
    "PROGRAMS",
    "Check",
    "Doubt",
    "Judgement",
    "Kind",
    "plain",
    "prove",
    "risky_assignment",
    "sed_script_harmless",
    "widest",
]

_SYSTEM_BIN = re.compile(r"/(?:usr/(?:local/)?)?s?bin/[^/]+")


def prove(cmd: Cmd) -> Judgement:
    """What `cmd` does when the guard knows it to be harmless, else why not."""
    if not cmd.name:  # only assignments or redirections
        return "read"
    argv0 = cmd.argv0 or cmd.name
    if "$" in argv0 or "`" in argv0:
        return doubt("dynamic-program", "the program is computed at run time")
    if "/" in argv0 and _SYSTEM_BIN.fullmatch(argv0) is None:
        return doubt("program-by-path", "run by path, it could be any program (a copy of rm?)")
    name = cmd.name
    if name in ESCAPES:
        return ESCAPE
    if PYTHON.fullmatch(name):
        return python(cmd)
    check = PROGRAMS.get(name)
    if check is None:
        return UNKNOWN
    known = LONG_OPTIONS.get(name)
    if known is not None and (unknown := unknown_long(cmd.args, known, name in NEGATABLE)):
        return doubt("unknown-option", f"{unknown} is not an option of {name} the guard knows")
    return check(cmd)
