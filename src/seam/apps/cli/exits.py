"""How a turn ended, as an exit code a script can rely on and one line a person can read.

`seam run` exits with one code per way a turn can end (the table below is printed by
`seam run --help` and copied into docs/cli.md), and `seam run --json` ends with one
`{"type": "exit", ...}` line carrying the same outcome, so a consumer of the event stream
never has to guess from a `done` event (a retried turn streams one per attempt).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seam.contracts.events import ToolApprovalRequired
    from seam.contracts.execution import Submission

COMPLETED = 0
FAILURE = 1
USAGE = 2
PROVIDER = 3
HALTED = 4
APPROVAL = 5
BUDGET = 6
# As `timeout(1)` exits when the command it runs takes too long.
TIMED_OUT = 124
INTERRUPTED = 130

# (code, outcome name in the `exit` JSON line, what it means)
EXIT_CODES: tuple[tuple[int, str, str], ...] = (
    (COMPLETED, "completed", "the turn completed"),
    (FAILURE, "failed", "anything else went wrong (storage, disk, an internal error)"),
    (USAGE, "usage", "bad input or config (arguments, prompt, config.toml, personality)"),
    (PROVIDER, "provider_error", "the model provider failed (auth, quota, unreachable, timeout)"),
    (HALTED, "halted", "the turn was halted (circuit breaker, max iterations)"),
    (APPROVAL, "approval_unavailable", "a tool call needed approval and no one could answer"),
    (BUDGET, "budget", "a spending limit was reached ([budget], a personality's, a cron job's)"),
    (TIMED_OUT, "timed_out", "the turn ran past its deadline (--timeout, [agent] turn_timeout)"),
    (INTERRUPTED, "cancelled", "cancelled (Ctrl-C, or the submission was aborted)"),
)
OUTCOMES = {code: name for code, name, _ in EXIT_CODES}

# Error kinds that mean the model provider failed: contracts/model.py ErrorKind (what
# services/llm raises: a refused connect, a connect, idle or whole-request timeout and a
# stalled stream are `retryable`, a 200 that is no event stream is `fatal`), plus the
# loop's own stream timeout.
PROVIDER_KINDS = frozenset(
    {"retryable", "rate_limited", "auth", "billing", "context_overflow", "refused", "fatal"}
    | {"timeout", "network", "unreachable"}
)
HALTED_FINISHES = frozenset({"halted", "max_iterations"})


def exit_codes_help() -> str:
    """The exit-code table for `--help` (`\\b` keeps Click from re-wrapping it)."""
    width = max(len(name) for _, name, _ in EXIT_CODES)
    rows = [f"  {code:>3}  {name.ljust(width)}  {what}" for code, name, what in EXIT_CODES]
    return "\b\nExit codes (the --json stream ends with a matching exit line):\n" + "\n".join(rows)


@dataclass(frozen=True, slots=True)
class TurnReport:
    """The verdict on one turn: `code`, its outcome name, and the line for stderr (empty
    when there is nothing to say)."""

    code: int
    message: str = ""

    @property
    def outcome(self) -> str:
        return OUTCOMES.get(self.code, "failed")

    def exit_line(self, submission_id: str | None = None) -> dict[str, Any]:
        """The last line of `seam run --json`."""
        out: dict[str, Any] = {"type": "exit", "code": self.code, "outcome": self.outcome}
        out["message"] = self.message
        if submission_id is not None:
            out["submission_id"] = submission_id
        return out


def waited_line(waited: ToolApprovalRequired, told: str | None = None) -> str:
    """Which tool waited for an approval nobody could give, and how to allow it: the very
    words its tool told the model (`told`, its `tool_end` result: they offer a config entry
    only where one would help), else the shared wording without one."""
    from seam.contracts.tool_approval import nobody_there

    said = _refusal(told) if told else ""
    if "no one was available" not in said:
        said = _refusal(nobody_there(f"{waited.command!r} ({waited.reason})"))
    return f"{waited.name}: {said}"


def _refusal(told: str) -> str:
    """A tool's refusal without the "error: refused: " its result starts with."""
    for prefix in ("error:", "refused:"):
        if told.startswith(prefix):
            told = told[len(prefix) :].lstrip()
    return told


def timed_out_line(seconds: float) -> str:
    """The turn's own deadline ran out (not a model request's: that is a provider error)."""
    return (
        f"timed out: the turn took longer than {seconds:g} s and was stopped"
        " (--timeout or [agent] turn_timeout sets the limit; 0 means none)"
    )


def judge(
    sub: Submission | None,
    *,
    error_kind: str | None,
    error_message: str | None,
    halt_message: str | None,
    waited: ToolApprovalRequired | None,
    hint: str = "",
    timed_out: float | None = None,
    told: str | None = None,
) -> TurnReport:
    """The report for a turn that ended as `sub` (None: it was abandoned unsettled);
    `timed_out`: the turn's deadline (seconds) ran out and stopped it; `told`: what the
    tool that `waited` told the model.

    Order: stopped by its deadline, cancelled, failed (provider or other), an approval
    nobody could give (a model that keeps retrying the refused command is then often
    halted: the approval is the cause worth naming), stopped by a spending limit (its
    message names the limit and how to raise it), halted, completed.
    """
    if sub is None or sub.outcome == "aborted":
        if timed_out is not None:
            return TurnReport(TIMED_OUT, timed_out_line(timed_out))
        return TurnReport(INTERRUPTED, "cancelled")
    if sub.outcome == "failed":
        message = error_message or sub.error or "the turn failed"
        if hint:
            message = f"{message} ({hint})"
        kind = error_kind or _kind_of(sub.error)
        return TurnReport(PROVIDER if kind in PROVIDER_KINDS else FAILURE, message)
    if waited is not None:
        return TurnReport(APPROVAL, waited_line(waited, told))
    if sub.finish_reason == "budget":
        return TurnReport(BUDGET, halt_message or "budget: a spending limit was reached")
    if sub.finish_reason in HALTED_FINISHES:
        why = halt_message or f"the turn ended with {sub.finish_reason!r}"
        return TurnReport(HALTED, f"halted: {why}")
    return TurnReport(COMPLETED)


def _kind_of(error: str | None) -> str:
    """The coordinator stores a failure as "<kind>: <message>"."""
    if not error:
        return ""
    head, sep, _ = error.partition(":")
    return head.strip() if sep else ""


__all__ = [
    "APPROVAL",
    "BUDGET",
    "COMPLETED",
    "EXIT_CODES",
    "FAILURE",
    "HALTED",
    "INTERRUPTED",
    "PROVIDER",
    "TIMED_OUT",
    "USAGE",
    "TurnReport",
    "exit_codes_help",
    "judge",
    "timed_out_line",
    "waited_line",
]
