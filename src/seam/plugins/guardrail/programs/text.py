"""sed and awk: their scripts are read, so one that runs commands or writes files is not
proven harmless."""

from __future__ import annotations

import re

from seam.plugins.guardrail.command import Cmd
from seam.plugins.guardrail.grammar import long_matches
from seam.plugins.guardrail.programs.base import EXECUTES, Doubt, Judgement, doubt

# sed: the commands that write files (w, W) or run them (e, and the s///e flag).
_SED_COMMAND = re.compile(r"[{}=!aicdDgGhHlnNpPqQrRsTtbxyzF:#wWeEvu]")


def sed_script_harmless(script: str) -> bool:
    """A sed script that neither runs commands nor writes files (an s///e or a `w`)."""
    i = 0
    while i < len(script):
        i = _sed_step(script, i)
        if i < 0:
            return False
    return True


def _sed_step(script: str, i: int) -> int:
    """The index after the piece of `script` at `i` (an address, a command with its text),
    or -1 when that piece runs a command or writes a file."""
    c = script[i]
    if c in " \t\n;!}{$,~+" or c.isdigit():
        return i + 1
    if c in "/\\":  # an address: /re/ or \cREc
        return _sed_address(script, i)
    if c in "ewW":
        return -1
    if c in "aic#:":  # text, a comment or a label to the end of the line
        end = script.find("\n", i)
        return len(script) if end < 0 else end
    if c in "rRbtT":  # a file name or label to the end of the command
        stop = re.search(r"[;\n}]", script[i:])
        return len(script) if stop is None else i + stop.start()
    if c in "sy":
        return _sed_substitution(script, i)
    return i + 1 if _SED_COMMAND.fullmatch(c) is not None else -1


def _sed_address(script: str, i: int) -> int:
    """After `/re/` or `\\cREc` (and its I or M flag), or -1 when it never ends."""
    c, n = script[i], len(script)
    delimiter = script[i + 1] if c == "\\" and i + 1 < n else "/"
    i = _skip_delimited(script, i + (2 if c == "\\" else 1), delimiter)
    if 0 <= i < n and script[i] in "IM":
        i += 1
    return i


def _sed_substitution(script: str, i: int) -> int:
    """After `s/re/text/flags` or `y/abc/xyz/`, or -1 when it is malformed or its flags run
    (e) or write (w, W) something."""
    n = len(script)
    if i + 1 >= n or script[i + 1] in "\\\n":
        return -1
    delimiter = script[i + 1]
    end = _skip_delimited(script, i + 2, delimiter)
    end = -1 if end < 0 else _skip_delimited(script, end, delimiter)
    if end < 0 or script[i] == "y":
        return end
    flags = re.match(r"[gpiImM0-9]*", script[end:])
    end += flags.end() if flags else 0
    return -1 if end < n and script[end] in "ewW" else end


def _skip_delimited(text: str, i: int, delimiter: str) -> int:
    """The index after the next unescaped `delimiter` from `i`, or -1."""
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == delimiter:
            return i + 1
        i += 1
    return -1


_SED_LONG = frozenset(
    {"--quiet", "--silent", "--regexp-extended", "--separate", "--posix", "--null-data"}
    | {"--zero-terminated", "--unbuffered", "--debug"}
)


def sed(cmd: Cmd) -> Judgement:
    words = _sed_words(cmd.args)
    if isinstance(words, Doubt):
        return words
    scripts, operands, in_place = words
    if not scripts:
        if not operands:
            return doubt("sed-no-script", "no sed script to judge")
        scripts.append(operands.pop(0))
    if not all(sed_script_harmless(s) for s in scripts):
        return doubt("sed-executes", "a sed script that runs commands or writes files")
    return "write" if in_place else "read"


def _sed_words(args: tuple[str, ...]) -> tuple[list[str], list[str], bool] | Doubt:
    """(the scripts, the operands, whether it edits in place), or why not to judge them."""
    scripts: list[str] = []
    operands: list[str] = []
    in_place = False
    i = 0
    while i < len(args):
        arg = args[i]
        has_value = i + 1 < len(args)
        if arg in ("-e", "--expression") and has_value:
            scripts.append(args[i + 1])
            i += 1
        elif arg.startswith("--expression="):
            scripts.append(arg.partition("=")[2])
        elif arg.startswith(("-i", "--in-place")):
            in_place = True
        elif arg.startswith("-") and arg != "-":
            takes = _sed_option(arg, has_value)
            if isinstance(takes, Doubt):
                return takes
            if takes:  # `-ne SCRIPT`
                scripts.append(args[i + 1])
                i += 1
        else:
            operands.append(arg)
        i += 1
    return scripts, operands, in_place


def _sed_option(arg: str, has_value: bool) -> bool | Doubt:
    """Whether option `arg` takes the next word as a script; a doubt when it reads a script
    file or is not known to be harmless."""
    if arg in ("-f", "--file") or arg.startswith("--file="):
        return doubt("sed-script-file", "runs a sed script from a file")
    if arg.startswith("--"):
        return False if arg in _SED_LONG else EXECUTES
    letters = arg[1:]
    if "e" in letters or "f" in letters:
        return True if letters.endswith("e") and has_value else EXECUTES
    return False if set(letters) <= set("nrEsuzl0123456789") else EXECUTES


_AWK_RISK = re.compile(
    r"\bsystem\b|\bgetline\b|\||\bprintf?\b[^;{}]*>|\bclose\b|\bfflush\b|@|\bENVIRON\b"
    r"|\bPROCINFO\b"
)
# gawk's long options: the ones that only tune how it reads (any prefix of another one is
# judged as that one, so `--s` could be `--source`, program text).
_AWK_HARMLESS_LONG = frozenset(
    {"--field-separator", "--assign", "--posix", "--traditional", "--re-interval"}
    | {"--characters-as-bytes", "--use-lc-numeric", "--non-decimal-data", "--sandbox"}
    | {"--version", "--help", "--copyright", "--lint", "--bignum", "--no-optimize"}
)
_AWK_ALL_LONG = _AWK_HARMLESS_LONG | {
    "--dump-variables", "--exec", "--file", "--gen-pot", "--include", "--load", "--optimize",
    "--pretty-print", "--profile", "--source", "--debug",
}  # fmt: skip


def awk(cmd: Cmd) -> Judgement:
    """The program text is judged (no system(), pipes, redirection, getline, @load); only
    options known to tune reading are accepted, long ones by any prefix."""
    args = cmd.args
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if arg.startswith("--"):
            meant = [o for o in _AWK_ALL_LONG if long_matches(arg, o)]
            if not meant or not set(meant) <= _AWK_HARMLESS_LONG:
                if meant == ["--file"] or arg.startswith("--file="):
                    return "run"  # a program file in the project
                return doubt("awk-option", f"awk {arg} runs, loads or writes something")
            takes_value = meant[0] in ("--assign", "--field-separator") and len(meant) == 1
            i += 2 if takes_value and "=" not in arg else 1
            continue
        if arg.startswith("-") and arg != "-":
            if arg[1] in "vF":
                i += 2 if len(arg) == 2 else 1
                continue
            if arg.startswith("-f"):
                return "run"  # a program file in the project
            if not set(arg[1:]) <= set("PcrbnSNV"):
                return doubt("awk-option", f"awk {arg} runs, loads or writes something")
            i += 1
            continue
        break
    if i >= len(args):
        return doubt("awk-no-program", "no awk program to judge")
    if _AWK_RISK.search(args[i]):
        return doubt("awk-executes", "an awk program that runs commands or writes files")
    return "read"
