"""`seam run`: one turn, the answer on stdout, and an exit code that says how it went.

On a terminal the answer is drawn as markdown once it is complete; piped, it is the
model's text as written.

stdout carries only the answer (or, with `--json`, only event lines and a last `exit`
line), so the command composes in pipes; tool activity goes to stderr, and only when a
person is watching it. The exit codes are in `exits.py` (and `seam run --help`).
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from seam.apps.cli.approval import APPROVAL_PROMPT, approval_request_text, parse_approval
from seam.apps.cli.exits import USAGE, TurnReport
from seam.apps.cli.faults import stored_failure
from seam.apps.cli.render import Style, TurnView, json_safe, terminal_safe
from seam.apps.cli.retries import RetryView
from seam.apps.cli.runner import (
    CliError,
    check_personality,
    check_session_name,
    check_toolset,
    fresh_session_name,
    open_runtime,
    require_utf8,
    run_turn,
    say_error,
    session_key,
    turn_time_limit,
)
from seam.apps.cli.turn_control import Approve, TurnResult
from seam.apps.cli.turn_report import turn_report
from seam.apps.cli.workdir import confirm_working_dir
from seam.contracts.events import AgentEvent, ToolApprovalRequired, event_to_dict
from seam.contracts.guardrail import UNAVAILABLE, ApprovalDecision
from seam.contracts.images import with_placeholders

if TYPE_CHECKING:
    from seam.contracts.execution import Submission
    from seam.contracts.sessions import SessionInfo
    from seam.contracts.turn_extras import TurnExtras
    from seam.wiring.runtime import Runtime

WARNINGS = {
    "length": "warning: the answer was cut off at the model's output limit",
    "content_filter": "warning: the provider's content filter stopped the answer",
}
# What to try next, by the kind of model error the loop reported.
ERROR_HINTS = {
    "auth": "check the API key in {key_env}",
    "billing": "check the account's quota and billing",
    "rate_limited": "the provider is rate-limiting requests; try again later",
    "context_overflow": "the conversation is too long for the model; start a new session",
}


def read_prompt(prompt: str) -> str:
    text = _read_stdin() if prompt == "-" else require_utf8(prompt, "the prompt")
    if not text.strip():
        where = "stdin was empty" if prompt == "-" else "the prompt is empty"
        raise CliError(f"{where}: pass the text to ask, or - to read it from stdin", USAGE)
    return text


def _read_stdin() -> str:
    if sys.stdin is None:
        raise CliError("stdin is closed: pass the prompt as an argument instead of -", USAGE)
    try:
        # Under a C locale Python decodes stdin with surrogateescape: check it as argv.
        return require_utf8(sys.stdin.read(), "the prompt on stdin")
    except UnicodeDecodeError as exc:
        raise CliError(
            f"stdin is not valid UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset"
            f" {exc.start}); pipe UTF-8 text to seam run -",
            USAGE,
        ) from None
    except OSError as exc:
        raise CliError(f"cannot read stdin: {exc.strerror or exc}", USAGE) from None


def _approver(prompt: str, yes: bool) -> Approve | None:
    """Who answers the turn's approval requests. `--yes` answers "once" to each (a person
    said yes to the run, forbidden commands are still never asked); a person on a
    terminal is asked on stdin; otherwise nobody is there to answer (None), whatever stdin
    holds: a pipe is a script's input, not a person (`echo | seam run`), and a blank line
    in it is not someone's "no"."""
    if yes:
        return _approve_for_yes
    stdin = sys.stdin
    if prompt == "-" or stdin is None or not _is_terminal(stdin):
        return None
    return _ask_on_terminal


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):  # closed or detached: nobody can type into it
        return False


async def _approve_for_yes(event: ToolApprovalRequired) -> ApprovalDecision:
    sys.stderr.write(f"{terminal_safe(approval_request_text(event))}\n  approved (--yes)\n")
    sys.stderr.flush()
    return "once"


async def _ask_on_terminal(event: ToolApprovalRequired) -> ApprovalDecision:
    """Ask the person at the terminal; three answers that are not a choice are a denial,
    end of input (Ctrl-D) means nobody is there to answer."""
    sys.stderr.write(f"{terminal_safe(approval_request_text(event))}\n")
    for _ in range(3):
        sys.stderr.write(APPROVAL_PROMPT)
        sys.stderr.flush()
        line = await _readline(sys.stdin)
        if line is None:
            sys.stderr.write("\n")
            return UNAVAILABLE
        decision = parse_approval(line)
        if decision is not None:
            return decision
        sys.stderr.write("answer o, s, a, d or n\n")
    return "deny"


async def _readline(stdin: TextIO) -> str | None:
    """A line from stdin in a daemon thread (so a prompt still up when the turn ends never
    holds the process open); None at end of input or when it cannot be read."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str | None] = loop.create_future()

    def read() -> None:
        try:
            line: str | None = stdin.readline() or None
        except (OSError, ValueError, UnicodeDecodeError):
            line = None

        def settle() -> None:
            if not answer.done():
                answer.set_result(line)

        loop.call_soon_threadsafe(settle)

    threading.Thread(target=read, name="seam-approval-prompt", daemon=True).start()
    return await answer


def _json_lines(event: AgentEvent) -> None:
    sys.stdout.write(json_safe(json.dumps(event_to_dict(event), ensure_ascii=False)) + "\n")
    sys.stdout.flush()


async def run_once(
    prompt: str,
    *,
    session: str | None,
    personality: str | None,
    model: str | None,
    as_json: bool,
    time_limit: float | None = None,
    yes: bool = False,
    images: tuple[str, ...] = (),
) -> int:
    """`seam run`: one turn in a session (a fresh one unless --session), its answer on
    stdout and its exit code the turn's outcome; `images`: files it shows the model."""
    confirm_working_dir(yes)
    text = read_prompt(prompt)
    check_session_name(session)
    extras = _image_extras(images)
    if extras is not None:
        text = with_placeholders(text, extras.images)
    # Retries go to stderr as they happen (stdout is for the answer or the JSON events).
    async with (
        RetryView(sys.stderr) as retries,
        open_runtime(model, on_retry=retries, interactive=True) as runtime,
    ):
        key, stored = await _checked_session(runtime, session, personality, extras)
        show = _event_view(as_json)

        def on_event(event: AgentEvent) -> None:
            retries.stop()
            if show is not None:
                show(event)

        approve = _approver(prompt, yes)
        result = await run_turn(
            runtime,
            key,
            text,
            personality=personality,
            on_event=on_event,
            approve=approve,
            time_limit=turn_time_limit(runtime, time_limit),
            stored=stored,
            extras=extras,
        )
        settings = runtime.settings
        key_env = settings.config.model.api_key_env if settings else "OPENAI_API_KEY"

    report = _report(result, key_env)
    sub = result.submission
    _print_answer(sub, as_json)
    report = _with_warning(report, sub)
    if as_json:
        _json_lines_raw(report.exit_line(result.submission_id))
    return report.code


async def _checked_session(
    runtime: Runtime, session: str | None, personality: str | None, extras: TurnExtras | None
) -> tuple[str, SessionInfo | None]:
    """The turn's session key and stored row, once the personality, the toolset and (for
    images) the model are checked: a refusal stores nothing."""
    # The key is derived once, here; a fresh name has no row to read yet.
    key = session_key(runtime, session or fresh_session_name("run"))
    stored = await runtime.sessions.get(key) if session is not None else None
    if personality:
        check_personality(runtime, personality)
    check_toolset(runtime, stored, personality)
    if extras is not None:
        from seam.apps.cli.images import check_sees_images

        check_sees_images(runtime, personality, stored)
    return key, stored


def _image_extras(paths: tuple[str, ...]) -> TurnExtras | None:
    """The turn's images (`--image`), read and checked before anything opens."""
    if not paths:
        return None
    from seam.apps.cli.images import read_images
    from seam.contracts.turn_extras import TurnExtras

    return TurnExtras(images=read_images(paths))


def _event_view(as_json: bool) -> Callable[[AgentEvent], None] | None:
    """How the turn's events are shown: JSON lines on stdout with --json, the live view
    on a terminal's stderr, nothing otherwise (stdout stays the bare answer)."""
    if as_json:
        return _json_lines
    if sys.stderr.isatty():
        return TurnView(sys.stderr, Style(True), text=False)
    return None


def _report(result: TurnResult, key_env: str) -> TurnReport:
    """The exit code and one-line message for the turn; a failure the environment caused
    (disk full, store gone) is said as such instead of as the model's error."""
    error = result.error
    hint = ERROR_HINTS.get(error.kind, "").format(key_env=key_env) if error else ""
    report = turn_report(result, hint)
    sub = result.submission
    environment = stored_failure(sub.error if sub is not None else None)
    if environment is not None:
        report = TurnReport(report.code, environment)
    return report


def _print_answer(sub: Submission | None, as_json: bool) -> None:
    """A completed turn's answer on stdout, made safe for the terminal (with --json the
    events already carried it, escaped): drawn as markdown when stdout is a terminal, the
    model's text as written otherwise (a pipe, a file)."""
    answer = sub.result if sub is not None and sub.outcome == "completed" else ""
    if sub is not None and sub.finish_reason == "budget":
        answer = ""  # the refusal is no answer: stderr says it, and the exit code is 6
    if not as_json and answer:
        if _is_terminal(sys.stdout):
            # Rich loads only for a person at a terminal: a piped one-shot never pays it.
            from seam.apps.cli.markdown import render_markdown

            render_markdown(answer, sys.stdout)
            return
        answer = terminal_safe(answer)  # shown, never obeyed (--json escapes it itself)
        sys.stdout.write(answer if answer.endswith("\n") else answer + "\n")
        sys.stdout.flush()


def _with_warning(report: TurnReport, sub: Submission | None) -> TurnReport:
    """Say the report's error on stderr; a successful turn that stopped short (its finish
    reason has a warning, e.g. the length limit) says the warning and keeps exit 0."""
    finish = sub.finish_reason if sub is not None else None
    warning = WARNINGS.get(finish or "") if report.code == 0 else None
    if report.message:
        say_error(report.message)
    elif warning:
        say_error(warning)
        report = TurnReport(0, warning)
    return report


def _json_lines_raw(payload: dict[str, object]) -> None:
    sys.stdout.write(json_safe(json.dumps(payload, ensure_ascii=False)) + "\n")
    sys.stdout.flush()
