"""`seam usage`: what was spent today, in a session and per day, against the limits
(`[budget]`, a personality's own, a cron job's) that apply; `--json` for scripts.

The same lines as the chat's `/usage` and the page's Usage section (services/budget/
report.py), so the figures a budget refusal quotes can be watched before it comes.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from seam.contracts.budget import BudgetLine
    from seam.wiring.budget import Spend

MAX_DAYS = 366


async def run_usage(session: str | None, personality: str | None, days: int, as_json: bool) -> int:
    from seam.apps.cli.exits import USAGE
    from seam.apps.cli.runner import CliError, check_personality, open_runtime, session_key
    from seam.wiring.budget import gate_of, scope_of, spend_of

    if not 1 <= days <= MAX_DAYS:
        raise CliError(f"--days must be between 1 and {MAX_DAYS}, not {days}", USAGE)
    async with open_runtime() as runtime:
        if personality is not None:
            check_personality(runtime, personality)
        key = session_key(runtime, session or "default")
        spend = await spend_of(gate_of(runtime), scope_of(runtime, key, personality), days)
    if as_json:
        body = spend.as_dict()
        body["session_name"] = session
        if session is None:
            body["session"] = None
            body["limits"] = [line for line in body["limits"] if line["period"] != "session"]
        sys.stdout.write(json.dumps(body) + "\n")
    else:
        sys.stdout.write("\n".join(usage_lines(spend, session)) + "\n")
    return 0


def _per_session_text(line: BudgetLine) -> str:
    allowed = f"${line.allowed:,.2f}" if line.unit == "usd" else f"{line.allowed:,.0f} tokens"
    return f"  session: {allowed} each ({line.source}; --session NAME shows one's spend)"


def usage_lines(spend: Spend, session: str | None) -> list[str]:
    """The report for a person: today, the session (when one was named), each limit,
    then per day."""
    from seam.apps.cli.render import terminal_safe
    from seam.apps.cli.sessions import usage_line
    from seam.wiring.budget import line_text

    lines = [f"today: {usage_line(spend.today).removeprefix('usage: ')}"]
    if session is not None:
        totals = spend.session
        said = "nothing yet" if totals is None else usage_line(totals).removeprefix("usage: ")
        lines.append(f"session {terminal_safe(session)}: {said}")
    shown = [line for line in spend.lines if session is not None or line.period != "session"]
    # A session's limit without a session named: say it exists (each session has its own).
    per_session = [line for line in spend.lines if line not in shown]
    if shown or per_session:
        lines.append("limits:")
        lines += [f"  {line_text(line)}" for line in shown]
        lines += [_per_session_text(line) for line in per_session]
    else:
        lines.append("limits: none ([budget] in config.toml sets them; see docs/budgets.md)")
    lines.append("per day:")
    for day, totals in spend.per_day:
        cost = f"${totals.cost_usd:.4f}"
        if totals.unpriced_calls:
            cost += " (+ cost unknown)"
        lines.append(
            f"  {day}  {totals.calls:>5} calls  {totals.usage.total_tokens:>12,} tokens  {cost}"
        )
    return lines
