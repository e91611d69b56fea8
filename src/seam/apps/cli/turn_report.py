"""`turn_report`: a finished CLI turn's exit code and one-line message.

`seam chat` and `seam run` both judge a turn by what it left behind (`TurnResult`): the
settled submission, the error, the halt, an approval nobody could give, a deadline that
ran out. One function hands those to `exits.judge`, so the two cannot judge differently.
"""

from __future__ import annotations

from seam.apps.cli.exits import TurnReport, judge
from seam.apps.cli.turn_control import TurnResult


def turn_report(result: TurnResult, hint: str = "") -> TurnReport:
    """The report for `result`; `hint` (what to try next) follows an error's message."""
    error = result.error
    return judge(
        result.submission,
        error_kind=error.kind if error else None,
        error_message=error.message if error else None,
        halt_message=result.halt.message if result.halt else None,
        waited=result.waited,
        hint=hint,
        timed_out=result.timed_out,
        told=result.told,
    )
