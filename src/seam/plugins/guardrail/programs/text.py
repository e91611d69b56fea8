"""sed and awk: their scripts are read, so one that runs commands or writes files is not
proven harmless."""

from __future__ import annotations

import re

from seam.plugins.guardrail.grammar import long_matches
from seam.plugins.guardrail.programs.base import EXECUTES, Judgement, doubt
from seam.plugins.guardrail.rules import Cmd

# sed: the commands that write files (w, W) or run them (e, and the s///e flag).
_SED_COMMAND = re.compile(r"[{}=!aicdDgGhHlnNpPqQrRsTtbxyzF:#wWeEvu]")


def sed_script_harmless(script: str) -> bool:
    """A sed script that neither runs commands nor writes files (an s///e or a `w`)."""
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;!}{" or c.isdigit() or c in "$,~+":
            i += 1
            continue
        if c in "/\\":  # an address: /re/ or \cREc
            delimiter = script[i + 1] if c == "\\" and i + 1 < n else "/"
            i = _skip_delimited(script, i + (2 if c == "\\" else 1), delimiter)
            if i < 0:
                return False
            if i < n and script[i] in "IM":
                i += 1
            continue
        if c in "ewW":
            return False
        if c in "aic":  # text to the end of the line
            end = script.find("\n", i)
            i = n if end < 0 else end
            continue
        if c in "rRbtT:#":  # a file name or label to the end of the command
            if c in "#:":
                line_end = script.find("\n", i)
                i = n if line_end < 0 else line_end
            else:
                stop = re.search(r"[;\n}]", script[i:])
                i = n if stop is None else i + stop.start()
            continue
        if c in "sy":
            if i + 1 >= n:
                return False
            delimiter = script[i + 1]
            if delimiter in "\\\n":
                return False
            i = _skip_delimited(script, i + 2, delimiter)
            if i < 0:
                return False
            i = _skip_delimited(script, i, delimiter)
            if i < 0:
                return False
            if c == "s":
                flags = re.match(r"[gpiImM0-9]*", script[i:])
                i += flags.end() if flags else 0
                if i < n and script[i] in "ewW":
                    return False
            continue
        if _SED_COMMAND.fullmatch(c) is None:
            return False
        i += 1
    return True


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
    args = cmd.args
    scripts: list[str] = []
    operands: list[str] = []
    in_place = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-e", "--expression") and i + 1 < len(args):
            scripts.append(args[i + 1])
            i += 2
            continue
        if arg.startswith("--expression="):
            scripts.append(arg.partition("=")[2])
        elif arg in ("-f", "--file") or arg.startswith("--file="):
            return doubt("sed-script-file", "runs a sed script from a file")
        elif arg.startswith("-i") or arg.startswith("--in-place"):
            in_place = True
        elif arg.startswith("--"):
            if arg not in _SED_LONG:
                return EXECUTES
        elif arg.startswith("-") and arg != "-":
            letters = arg[1:]
            if "e" in letters or "f" in letters:
                if letters.endswith("e") and i + 1 < len(args):
                    scripts.append(args[i + 1])
                    i += 2
                    continue
                return EXECUTES
            if not set(letters) <= set("nrEsuzl0123456789"):
                return EXECUTES
        else:
            operands.append(arg)
        i += 1
    if not scripts:
        if not operands:
            return doubt("sed-no-script", "no sed script to judge")
        scripts.append(operands.pop(0))
    if not all(sed_script_harmless(s) for s in scripts):
        return doubt("sed-executes", "a sed script that runs commands or writes files")
    return "write" if in_place else "read"


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
