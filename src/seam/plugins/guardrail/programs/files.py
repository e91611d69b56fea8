"""Programs that read, list, pack and change files, and small system readers."""

from __future__ import annotations

import re

from seam.plugins.guardrail.command import Cmd
from seam.plugins.guardrail.grammar import ps_shows_environment
from seam.plugins.guardrail.programs.base import (
    EXECUTES,
    Judgement,
    doubt,
    has_option,
)


def no_operands(cmd: Cmd) -> Judgement:
    """`hostname`, `date`: reading is harmless, an operand would set something."""
    return "read" if not cmd.options[2] else doubt("sets-system", "changes system state")


def ps(cmd: Cmd) -> Judgement:
    if ps_shows_environment(cmd.args):
        return doubt("prints-environment", "shows every process's environment (API keys)")
    return "read"


def date(cmd: Cmd) -> Judgement:
    return doubt("sets-system", "sets the clock") if has_option(cmd, "-s", "--set") else "read"


def mkdir(cmd: Cmd) -> Judgement:
    """Creating a directory overwrites nothing (an existing one is left as it is)."""
    return "write" if has_option(cmd, "-Z", "--context") else "add"


def rm(cmd: Cmd) -> Judgement:
    if has_option(cmd, "-r", "-R", "--recursive"):
        return doubt("rm-recursive", "deletes a directory tree")
    return "write"


def sort(cmd: Cmd) -> Judgement:
    if has_option(cmd, "--compress-program"):
        return EXECUTES
    return "write" if has_option(cmd, "-o", "--output") else "read"


_TAR_EXECUTES = (
    "--checkpoint-action", "--to-command", "--use-compress-program", "-I", "--info-script",
    "-F", "--new-volume-script", "--rsh-command", "--rmt-command", "--index-file",
)  # fmt: skip


def tar(cmd: Cmd) -> Judgement:
    args = cmd.args
    if args and not args[0].startswith("-") and ("I" in args[0] or "F" in args[0]):
        return EXECUTES  # old-style cluster: `tar cIf prog x.tar`
    if has_option(cmd, *_TAR_EXECUTES):
        return EXECUTES
    listing = has_option(cmd, "-t", "--list") or (bool(args) and args[0].startswith("t"))
    return "read" if listing else "write"


def unzip(cmd: Cmd) -> Judgement:
    return "read" if has_option(cmd, "-l", "-t", "-v", "-p", "-Z") else "write"


def uniq(cmd: Cmd) -> Judgement:
    """`uniq IN OUT` writes OUT."""
    return "write" if len(cmd.options[2]) >= 2 else "read"


def xxd(cmd: Cmd) -> Judgement:
    return "write" if len(cmd.options[2]) >= 2 else "read"


def yq(cmd: Cmd) -> Judgement:
    return "write" if has_option(cmd, "-i", "--inplace") else "read"


def less(cmd: Cmd) -> Judgement:
    # `+cmd` runs less commands at start (`+!cmd` runs a shell); -k reads key bindings.
    lesskey = ("-k", "--lesskey-file", "--lesskey-src", "--lesskey-content")
    if any(a.startswith("+") for a in cmd.args) or has_option(cmd, *lesskey):
        return EXECUTES
    return "write" if has_option(cmd, "-o", "-O", "--log-file", "--LOG-FILE") else "read"


_FIND_WITH_VALUE = frozenset(
    {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex"}
    | {"-regextype", "-type", "-xtype", "-size", "-newer", "-anewer", "-cnewer", "-mtime"}
    | {"-mmin", "-atime", "-amin", "-ctime", "-cmin", "-user", "-group", "-uid", "-gid"}
    | {"-perm", "-links", "-inum", "-samefile", "-lname", "-ilname", "-maxdepth", "-used"}
    | {"-mindepth", "-fstype", "-context", "-printf", "-files0-from", "-D", "-O"}
)
_FIND_FLAGS = frozenset(
    {"-empty", "-nouser", "-nogroup", "-readable", "-writable", "-executable", "-true"}
    | {"-false", "-not", "!", "-a", "-and", "-o", "-or", ",", "(", ")", "-print", "-print0"}
    | {"-ls", "-prune", "-quit", "-depth", "-d", "-mount", "-xdev", "-noleaf", "-follow"}
    | {"-ignore_readdir_race", "-noignore_readdir_race", "-daystart", "-warn", "-nowarn"}
    | {"-help", "--help", "-version", "--version", "-P", "-L", "-H", "+", ";"}
)
_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def find(cmd: Cmd) -> Judgement:
    """Every predicate must be one find knows to only test or print; what -exec runs is
    judged on its own (once per file found), anything else is unproven."""
    args = cmd.args
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _FIND_RUNS:
            end = i + 1
            while end < len(args) and args[end] not in (";", "+"):
                end += 1
            i = end + 1
            continue
        if arg in ("-fprint", "-fprint0", "-fprintf", "-fls"):
            return "write"
        if arg == "-delete":
            return doubt("find-delete", "deletes every file that matches")
        if arg in _FIND_WITH_VALUE or re.fullmatch(r"-newer[aBcmt][aBcmt]", arg):
            i += 2
            continue
        if arg.startswith("-") and arg not in _FIND_FLAGS and len(arg) > 1:
            return doubt("find-predicate", f"find {arg} is not known to be harmless")
        i += 1
    return "read"
