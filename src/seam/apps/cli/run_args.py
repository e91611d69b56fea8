"""`seam run`'s arguments read without Typer, for the one-shot path.

A one-shot is the command scripts and editors call again and again, and Typer (its
vendored click, and pydantic, which it coerces every parameter with) is about a fifth of
the modules such a run imports. Well-formed arguments are read here, to the same values
Typer would give; anything else (`--help`, an unknown or repeated option, a bad number, a
missing prompt, a prompt that looks like an option) returns None, and Typer handles the
command as before, errors and help included.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

_VALUED = frozenset({"--session", "--personality", "--model", "--timeout"})
_FLAGS = {"--json": "json", "--yes": "yes", "-y": "yes"}
_REPEATED = "--image"  # may be given again and again


@dataclass
class RunArgs:
    """What `seam run` was asked, as `app.run` receives it."""

    prompt: str  # "-": read from stdin
    session: str | None = None  # --session NAME
    personality: str | None = None  # --personality ID
    model: str | None = None  # --model NAME
    json: bool = False  # --json
    yes: bool = False  # --yes, -y
    timeout: float | None = None  # --timeout SECONDS
    images: tuple[str, ...] = ()  # --image FILE, repeatable


def parse_run(args: list[str]) -> RunArgs | None:
    """The arguments after `run`, or None when Typer should read them."""
    values: dict[str, str] = {}
    flags: set[str] = set()
    prompts: list[str] = []
    images: list[str] = []
    at = 0
    while at < len(args):
        arg = args[at]
        at += 1
        if arg == "--":
            prompts += args[at:]
            break
        name, equals, value = arg.partition("=")
        if name == _REPEATED or (name in _VALUED and name not in values):
            got = _option_value(args, at, value if equals else None)
            if got is None:
                return None
            value, at = got
            if name == _REPEATED:
                images.append(value)
            else:
                values[name] = value
        elif arg in _FLAGS and _FLAGS[arg] not in flags:
            flags.add(_FLAGS[arg])
        elif arg.startswith("-") and arg != "-":
            return None
        else:
            prompts.append(arg)
    if len(prompts) != 1:
        return None
    timeout = _seconds(values.get("--timeout"))
    if timeout is False:
        return None
    return RunArgs(
        prompts[0],
        session=values.get("--session"),
        personality=values.get("--personality"),
        model=values.get("--model"),
        json="json" in flags,
        yes="yes" in flags,
        timeout=timeout,
        images=tuple(images),
    )


def _option_value(args: list[str], at: int, given: str | None) -> tuple[str, int] | None:
    """An option's value (`given` after `=`, else the next argument) and where reading
    goes on; None when the next argument is missing or looks like an option."""
    if given is not None:
        return given, at
    if at >= len(args) or args[at].startswith("-"):
        return None
    return args[at], at + 1


def _seconds(text: str | None) -> float | bool | None:
    """A `--timeout` as Typer reads it (a number >= 0), None if absent, False if not."""
    if text is None:
        return None
    if "_" in text:  # Python's float takes 1_000; Typer's coercion does not
        return False
    try:
        value = float(text.strip())
    except ValueError:
        return False
    return value if math.isfinite(value) and value >= 0 else False


def run_command(args: RunArgs, *, exit_now: bool = False) -> None:
    """Run the one-shot (`seam run`): its answer printed, its failure one line and the
    process's exit code (SystemExit when not 0; `exit_now`: the process ends there)."""
    from seam.apps.cli.oneshot import run_once
    from seam.apps.cli.runner import execute

    execute(
        run_once(
            args.prompt,
            session=args.session,
            personality=args.personality,
            model=args.model,
            as_json=args.json,
            time_limit=args.timeout,
            yes=args.yes,
            images=args.images,
        ),
        json_exit=args.json,
        exit_now=exit_now,
    )
