"""Tool-result budgets: cut oversized results so one `cat` cannot flood the context."""

from __future__ import annotations


def truncate_result(text: str, budget: int) -> tuple[str, bool]:
    """Keep the head and the tail (errors and summaries tend to sit at the end).

    The marker says how much was dropped, so the model knows to ask for less (a range,
    a grep) instead of assuming it saw everything.
    """
    if len(text) <= budget:
        return text, False
    head = budget * 3 // 4
    tail = budget - head
    dropped = len(text) - budget
    marker = (
        f"\n\n[... truncated: {dropped:,} of {len(text):,} characters omitted; "
        "request a smaller range to see them ...]\n\n"
    )
    return text[:head] + marker + (text[-tail:] if tail else ""), True
