"""Seam's names onto ACP's: tool kinds, permission options, stop reasons, prompt text,
plan entries.

Pure functions and tables, so the protocol's vocabulary lives in one place."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from acp.schema import PermissionOption

from seam.contracts.guardrail import ApprovalDecision

StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]
ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]

TOOL_KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "list_dir": "read",
    "write_file": "edit",
    "patch": "edit",
    "search_files": "search",
    "session_search": "search",
    "memory_search": "search",
    "terminal": "execute",
    "process": "execute",
    "execute_code": "execute",
    "web_fetch": "fetch",
    "todo": "think",
}

# The editor's four answers onto our five (a cancelled request is a denial).
PERMISSION_OPTIONS = (
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    PermissionOption(option_id="reject_always", name="Always reject", kind="reject_always"),
)
DECISIONS: dict[str, ApprovalDecision] = {
    "allow_once": "once",
    "allow_always": "always",
    "reject_once": "deny",
    "reject_always": "always_deny",
}

_STOP_REASONS: dict[str, StopReason] = {
    "cancelled": "cancelled",
    "length": "max_tokens",
    "max_iterations": "max_turn_requests",
    "content_filter": "refusal",
}


# The argument that says what a call is about, shown in its title ("terminal: make test").
_TITLE_ARGUMENTS = ("command", "path", "query", "url", "pattern")
_TITLE_CHARS = 80


def tool_title(name: str, arguments: Any) -> str:
    if isinstance(arguments, dict):
        for key in _TITLE_ARGUMENTS:
            value = arguments.get(key)
            if isinstance(value, str) and value:
                short = " ".join(value.split())
                if len(short) > _TITLE_CHARS:
                    short = short[: _TITLE_CHARS - 1] + "…"
                return f"{name}: {short}"
    return name


def tool_kind(name: str) -> ToolKind:
    return TOOL_KINDS.get(name, "other")


def decision_for(outcome: Any) -> ApprovalDecision:
    """Our answer for a `session/request_permission` outcome (anything else: deny)."""
    if getattr(outcome, "outcome", None) == "selected":
        return DECISIONS.get(getattr(outcome, "option_id", ""), "deny")
    return "deny"


def stop_reason(finish_reason: str, *, cancelled: bool) -> StopReason:
    if cancelled:
        return "cancelled"
    return _STOP_REASONS.get(finish_reason, "end_turn")


def prompt_text(blocks: Sequence[Any]) -> str:
    """The prompt's text: text blocks as they are, embedded resources as quoted context,
    links by their URI (images and audio are not offered: promptCapabilities says so)."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is not None:
                parts.append(f"<context uri={resource.uri!r}>\n{text}\n</context>")
        elif kind == "resource_link":
            parts.append(f"[{block.name}]({block.uri})")
    return "\n\n".join(part for part in parts if part)


_TODO_LINE = re.compile(r"^\d+\. \[(?P<mark>[ x>])\] (?P<text>.*)$")
# ACP's plan entry statuses (`acp.schema.PlanEntryStatus`), by the todo tool's marks.
PlanStatus = Literal["pending", "in_progress", "completed"]
_TODO_STATUS: dict[str, PlanStatus] = {" ": "pending", ">": "in_progress", "x": "completed"}


def plan_from_todo(result: str) -> list[tuple[str, PlanStatus]] | None:
    """(text, ACP status) per item of a `todo` tool result, or None if it is not a list."""
    if result.strip() == "todo list is empty":
        return []
    lines = result.strip().splitlines()
    if not lines or not lines[0].startswith("todo ("):
        return None
    entries: list[tuple[str, PlanStatus]] = []
    for line in lines[1:]:
        match = _TODO_LINE.match(line)
        if match:
            entries.append((match["text"], _TODO_STATUS[match["mark"]]))
    return entries
