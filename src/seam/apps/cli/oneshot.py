"""`seam run`: one turn, the answer on stdout, and an exit code that says how it went.

stdout carries only the answer (or, with `--json`, only event lines), so the command
composes in pipes; tool activity goes to stderr, and only when a person is watching it.
"""

from __future__ import annotations

import asyncio
import json
import sys

from seam.apps.cli.render import Style, TurnView
from seam.apps.cli.retries import RetryView
from seam.apps.cli.runner import (
    APPROVAL_PROMPT,
    FAILURE,
    INTERRUPTED,
    USAGE,
    CliError,
    approval_request_text,
    check_personality,
    fresh_session_name,
    open_runtime,
    parse_approval,
    run_turn,
    say_error,
    session_key,
    turn_time_limit,
)
from seam.apps.cli.workdir import confirm_working_dir
from seam.contracts.events import (
    AgentEvent,
    Done,
    ErrorEvent,
    Halt,
    ToolApprovalRequired,
    event_to_dict,
)
from seam.contracts.guardrail import ApprovalDecision

FAILED_FINISHES = frozenset({"error", "timeout", "max_iterations"})
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
    text = sys.stdin.read() if prompt == "-" else prompt
    if not text.strip():
        where = "stdin was empty" if prompt == "-" else "the prompt is empty"
        raise CliError(f"{where}: pass the text to ask, or - to read it from stdin", USAGE)
    return text


class _Outcome:
    """Watches the events for what went wrong, so the failure line can say why."""

    def __init__(self) -> None:
        self.error: ErrorEvent | None = None
        self.halt: Halt | None = None

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, ErrorEvent) and self.error is None:
            self.error = event
        elif isinstance(event, Halt) and self.halt is None:
            self.halt = event

    def reason(self, done: Done, key_env: str) -> str:
        if self.error is not None:
            hint = ERROR_HINTS.get(self.error.kind, "").format(key_env=key_env)
            return f"{self.error.message} ({hint})" if hint else self.error.message
        if self.halt is not None:
            return self.halt.message
        return f"the turn ended with {done.finish_reason!r}"


async def _ask_on_stdin(event: ToolApprovalRequired) -> ApprovalDecision:
    """One answer line per request; end of input (or nonsense) is a denial."""
    sys.stderr.write(f"{approval_request_text(event)}\n{APPROVAL_PROMPT}")
    sys.stderr.flush()
    line = await asyncio.to_thread(sys.stdin.readline)
    return parse_approval(line) or "deny"


def _json_lines(event: AgentEvent) -> None:
    sys.stdout.write(json.dumps(event_to_dict(event), ensure_ascii=False) + "\n")
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
) -> int:
    confirm_working_dir(yes)
    text = read_prompt(prompt)
    # Retries go to stderr as they happen (stdout is for the answer or the JSON events).
    async with (
        RetryView(sys.stderr) as retries,
        open_runtime(model, on_retry=retries, interactive=True) as runtime,
    ):
        name = session if session is not None else fresh_session_name("run")
        session_key(runtime, name)
        if personality:
            check_personality(runtime, personality)
        outcome = _Outcome()
        if as_json:
            show = _json_lines
        elif sys.stderr.isatty():
            show = TurnView(sys.stderr, Style(True), text=False)
        else:
            show = None

        def on_event(event: AgentEvent) -> None:
            retries.stop()
            outcome(event)
            if show is not None:
                show(event)

        # Approvals are read from stdin (a terminal or a pipe) unless stdin held the prompt.
        approve = None if prompt == "-" else _ask_on_stdin
        done = await run_turn(
            runtime,
            name,
            text,
            personality=personality,
            on_event=on_event,
            approve=approve,
            time_limit=turn_time_limit(runtime, time_limit),
        )
        settings = runtime.settings
        key_env = settings.config.model.api_key_env if settings else "OPENAI_API_KEY"

    if done is None or done.finish_reason == "cancelled":
        say_error("cancelled")
        return INTERRUPTED
    if done.finish_reason in FAILED_FINISHES:
        say_error(outcome.reason(done, key_env))
        return FAILURE
    if not as_json:
        answer = done.text
        sys.stdout.write(answer if answer.endswith("\n") or not answer else answer + "\n")
        sys.stdout.flush()
    warning = WARNINGS.get(done.finish_reason)
    if warning:
        say_error(warning)
    return 0
