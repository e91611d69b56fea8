"""What `echo`, `printf` and `cat <<EOF` print, so text a shell reads from them (or from
`$(echo ..)`) is judged as the script it is."""

from __future__ import annotations

import base64
import binascii
import re

from seam.plugins.guardrail.command import Cmd
from seam.plugins.guardrail.normalize import program_name
from seam.plugins.guardrail.shell import Clock, decode_c_escapes, parse

HEREDOCS = frozenset({"<<", "<<-"})
_ECHO_FLAGS = re.compile(r"-[neE]+")
_PRINTF_UNSUPPORTED = re.compile(r"%[^sb%]")


def fold_echo(match: re.Match[str], deadline: Clock) -> str:
    inner = match.group(1) if match.group(1) is not None else match.group(2)
    parsed = parse(inner, deadline=deadline)
    if parsed.problem or parsed.substitutions or len(parsed.pipelines) != 1:
        return match.group(0)
    stages = parsed.pipelines[0].stages
    if len(stages) != 1 or not stages[0].words:
        return match.group(0)
    words = stages[0].words
    output = echo_output(program_name(words[0]), words[1:])
    return match.group(0) if output is None else output.rstrip("\n")


def echo_output(name: str, args: tuple[str, ...]) -> str | None:
    """What `echo` or `printf` prints (bash semantics), or None when it cannot be known."""
    if name == "echo":
        escapes = False
        start = 0
        while start < len(args) and _ECHO_FLAGS.fullmatch(args[start]):
            escapes = escapes or "e" in args[start]
            start += 1
        text = " ".join(args[start:])
        return decode_c_escapes(text) if escapes else text
    if name != "printf" or not args:
        return None
    fmt, values = (args[1], args[2:]) if args[0] == "--" and len(args) > 1 else (args[0], args[1:])
    if _PRINTF_UNSUPPORTED.search(fmt):
        return None
    out: list[str] = []
    given = iter(values)
    for piece in re.split(r"(%[sb%])", fmt):
        if piece == "%s":
            out.append(next(given, ""))
        elif piece == "%b":
            out.append(decode_c_escapes(next(given, "")))
        elif piece == "%%":
            out.append("%")
        else:
            out.append(decode_c_escapes(piece))
    return "".join(out)


def piped_texts(upstream: tuple[Cmd | None, ...]) -> list[str]:
    """The program text a shell would read from `echo ... [| base64 -d] |` or from
    `cat <<EOF |`, when knowable.

    Echoed text is checked both as printed and with its escapes decoded: `sh` and `bash`
    disagree on whether `echo` decodes them, and the stricter reading must win."""
    if not upstream or upstream[-1] is None:
        return []
    last = upstream[-1]
    text = printed(last)
    if text is None and len(upstream) >= 2 and upstream[-2] is not None:
        source = printed(upstream[-2])
        text = None if source is None else _decode(last, source)
    if text is None:
        return []
    decoded = decode_c_escapes(text)
    return [text] if decoded == text else [text, decoded]


def printed(cmd: Cmd) -> str | None:
    if cmd.name == "cat" and not cmd.args:
        for redirect in cmd.redirects:
            if redirect.op in HEREDOCS:
                return redirect.body
            if redirect.op == "<<<":
                return redirect.target
        return None
    return echo_output(cmd.name, cmd.args)


def _decode(decoder: Cmd, text: str) -> str | None:
    try:
        if decoder.name == "base64" and ("-d" in decoder.args or "--decode" in decoder.args):
            return base64.b64decode(text.strip() + "==", validate=False).decode()
        if decoder.name == "xxd" and "-r" in decoder.args:
            return bytes.fromhex("".join(text.split())).decode()
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    return None
