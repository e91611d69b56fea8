"""`Cmd`, one simple command as the rules see it, and what a rule derives from one: its
options and operands, and the files it writes."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from seam.plugins.guardrail.normalize import canonical_path, skip_options
from seam.plugins.guardrail.shell import Redirect


@dataclass(frozen=True)
class Cmd:
    """One simple command as the rules see it (what several rules derive is cached)."""

    name: str  # the program, e.g. "rm" for `sudo /bin/rm`
    args: tuple[str, ...]
    redirects: tuple[Redirect, ...] = ()
    upstream: tuple[Cmd, ...] = ()  # the earlier stages of its pipeline, unwrapped
    bulk: bool = False  # run once per input item (xargs, find -exec)
    cwd: str | None = None  # canonical working directory, when a `cd` made it known
    home: str = ""  # the person's home directory, so /home/me/x is seen as ~/x
    argv0: str = ""  # the program as written, e.g. "./install.sh"
    # Files downloaded earlier in the same script (canonical paths).
    downloaded: frozenset[str] = frozenset()

    def path(self, arg: str) -> str:
        return canonical_path(arg, home=self.home, cwd=self.cwd)

    @cached_property
    def options(self) -> tuple[frozenset[str], frozenset[str], list[str]]:
        return options_of(self.args)

    @cached_property
    def writes(self) -> tuple[str, ...]:
        return written_paths(self)


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    reason: str
    test: Callable[[Cmd], bool]
    programs: frozenset[str] | None = None  # None: tested against every command


@dataclass(frozen=True, slots=True)
class TextRule:
    """A rule over the raw text of a script, for shapes no single command shows."""

    name: str
    reason: str
    pattern: re.Pattern[str]


def options_of(args: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str], list[str]]:
    """(short option letters, long options, operands); GNU style: options anywhere."""
    letters: set[str] = set()
    longs: set[str] = set()
    operands: list[str] = []
    done = False
    for arg in args:
        if done or arg == "-" or not arg.startswith("-"):
            operands.append(arg)
        elif arg == "--":
            done = True
        elif arg.startswith("--"):
            longs.add(arg.partition("=")[0])
        else:
            letters.update(arg[1:])
    return frozenset(letters), frozenset(longs), operands


def recursive(cmd: Cmd) -> bool:
    letters, longs, _ = cmd.options
    return "r" in letters or "R" in letters or "--recursive" in longs


def subcommand(args: tuple[str, ...], with_value: frozenset[str]) -> tuple[str, tuple[str, ...]]:
    start = skip_options(args, with_value)
    if start >= len(args):
        return "", ()
    return args[start], args[start + 1 :]


WRITING_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
COPIERS = frozenset({"cp", "mv", "install", "ln", "rsync", "scp"})
# Programs that write (or wipe) every file named in their operands.
OPERAND_WRITERS = frozenset({"tee", "shred", "wipe", "srm", "wipefs", "blkdiscard", "truncate"})


def written_paths(cmd: Cmd) -> tuple[str, ...]:
    """The files a command writes, canonical: redirections, tee, cp/mv targets, dd of=..."""
    raw: list[str] = [
        r.target
        for r in cmd.redirects
        if r.op in WRITING_REDIRECTS
        and not (r.op == ">&" and (r.target.isdigit() or r.target == "-"))
    ]
    name, args = cmd.name, cmd.args
    letters, longs, operands = cmd.options
    if name in OPERAND_WRITERS:
        raw.extend(operands)
    elif name in COPIERS:
        raw.extend(copy_targets(args, operands))
    elif name == "dd":
        raw.extend(a[3:] for a in args if a.startswith("of="))
    elif name == "sed":
        if "i" in letters or "--in-place" in longs:
            raw.extend(operands[1:] if "e" not in letters and "f" not in letters else operands)
    elif name in ("curl", "wget"):
        raw.extend(download_targets(args))
    elif name in ("tar", "bsdtar", "unzip"):
        raw.extend(extract_targets(name, args, letters, longs))
    return tuple(cmd.path(p) for p in raw if p)


def copy_targets(args: tuple[str, ...], operands: list[str]) -> list[str]:
    for i, arg in enumerate(args):
        if arg in ("-t", "--target-directory") and i + 1 < len(args):
            return [args[i + 1]]
        if arg.startswith("--target-directory="):
            return [arg.partition("=")[2]]
    return operands[-1:] if len(operands) >= 2 else []


def download_targets(args: tuple[str, ...]) -> list[str]:
    targets = []
    for i, arg in enumerate(args):
        if arg in ("-o", "-O", "--output", "--output-document") and i + 1 < len(args):
            targets.append(args[i + 1])
        elif arg.startswith(("--output=", "--output-document=")):
            targets.append(arg.partition("=")[2])
    return [t for t in targets if t != "-"]


def extract_targets(
    name: str, args: tuple[str, ...], letters: frozenset[str], longs: frozenset[str]
) -> list[str]:
    """Where an archive is unpacked: `tar -x -C DIR`, `unzip -d DIR`."""
    if name != "unzip":
        old_style = bool(args) and not args[0].startswith("-") and "x" in args[0]
        if not (old_style or "x" in letters or "--extract" in longs or "--get" in longs):
            return []
    flags = ("-d",) if name == "unzip" else ("-C", "--directory")
    targets = [args[i + 1] for i, a in enumerate(args[:-1]) if a in flags]
    return targets + [a.partition("=")[2] for a in args if a.startswith("--directory=")]
