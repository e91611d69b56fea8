"""A session as a markdown document: the transcript a person reads, shares or keeps in
notes. Built from the same export dict `seam sessions export` prints as JSON
(`seam.apps.cli.sessions.named_export`), so both formats say the same thing.

Tool calls and results go in code fences longer than any backtick run inside them, so
nothing the agent or a tool wrote can close the fence and turn into markdown.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

ROLE_HEADINGS = {"user": "You", "assistant": "Seam", "system": "System", "tool": "Tool"}
_TICKS = re.compile(r"`+")


def fenced(text: str, lang: str = "") -> str:
    """`text` in a fence no backtick run of it can close."""
    longest = max((len(m) for m in _TICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def _when(timestamp: float | None) -> str:
    if not timestamp:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(timestamp))


def _header(exported: dict[str, Any]) -> list[str]:
    usage = exported.get("usage") or {}
    title = exported.get("title") or exported["name"]
    return [
        f"# {' '.join(str(title).split())}",
        "",
        f"- Session: `{exported['name']}`",
        f"- Personality: {exported.get('personality') or '-'}",
        f"- Created: {_when(exported.get('created_at'))}",
        f"- Last active: {_when(exported.get('updated_at'))}",
        f"- Messages: {len(exported.get('messages', []))}",
        f"- Tokens: {usage.get('input_tokens', 0):,} in, {usage.get('output_tokens', 0):,} out",
        f"- Cost: ${usage.get('cost_usd', 0.0):.4f}",
        "",
    ]


def _message(message: dict[str, Any]) -> list[str]:
    role = message.get("role", "")
    heading = ROLE_HEADINGS.get(role, role)
    if role == "tool":
        heading = f"Tool result: {message.get('name') or 'tool'}"
    lines = [f"## {heading}", ""]
    content = str(message.get("content") or "").strip()
    if content:
        lines += [fenced(content) if role == "tool" else content, ""]
    for call in message.get("tool_calls") or []:
        arguments = json.dumps(call.get("arguments"), ensure_ascii=False, indent=2)
        lines += [f"Tool call `{call.get('name')}`:", "", fenced(arguments, "json"), ""]
    if message.get("interrupted"):
        lines += ["*(interrupted)*", ""]
    return lines


def to_markdown(exported: dict[str, Any]) -> str:
    """The export dict (`named_export`) as one markdown document."""
    lines = _header(exported)
    for message in exported.get("messages", []):
        lines += _message(message)
    return "\n".join(lines).rstrip() + "\n"


__all__ = ["fenced", "to_markdown"]
