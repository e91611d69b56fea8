"""`seam sessions`: find past conversations and read them back."""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from seam.apps.cli.exits import USAGE
from seam.apps.cli.render import (
    Style,
    arguments_preview,
    first_line,
    json_safe,
    shorten,
    terminal_safe,
)
from seam.apps.cli.runner import CliError, open_runtime, session_key
from seam.contracts.messages import Message
from seam.contracts.sessions import SessionInfo, UsageTotals, message_to_dict, usage_to_dict

if TYPE_CHECKING:
    from rich.table import Table

    from seam.wiring.runtime import Runtime

RESULT_PREVIEW_CHARS = 100
ROLE_LABELS = {"user": "you", "assistant": "seam", "system": "system"}


def usage_line(totals: UsageTotals) -> str:
    """Tokens and cost of a session, one line (`/usage`, `seam sessions show`)."""
    u = totals.usage
    parts = [
        f"{totals.calls} model calls",
        f"{u.input_tokens:,} in",
        f"{u.output_tokens:,} out",
    ]
    if u.cache_read_tokens or u.cache_write_tokens:
        parts.append(f"cache {u.cache_read_tokens:,} read / {u.cache_write_tokens:,} written")
    if u.reasoning_tokens:
        parts.append(f"{u.reasoning_tokens:,} reasoning")
    cost = f"${totals.cost_usd:.4f}"
    if totals.unpriced_calls:
        cost += f" (+{totals.unpriced_calls} calls with an unknown price)"
    parts.append(cost)
    return "usage: " + " · ".join(parts)


def when(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))


def session_table(
    infos: Sequence[SessionInfo], name_of: Any, *, current: str | None = None
) -> Table:
    """Newest first, as the store lists them; `current` (a key) is marked."""
    from rich.table import Table

    # The title takes what room the line has left (expand + ratio); the rest keep theirs.
    table = Table(box=None, pad_edge=False, header_style="bold", expand=True)
    table.add_column("name", no_wrap=True, overflow="fold")
    # One line per session: a long title is cut (an ellipsis), never wrapped.
    table.add_column("title", no_wrap=True, overflow="ellipsis", ratio=1)
    # Only the title gives way when the line is short of room.
    table.add_column("personality", no_wrap=True)
    table.add_column("messages", justify="right", no_wrap=True)
    table.add_column("last activity", no_wrap=True)
    for info in infos:
        name = name_of(info.key)
        table.add_row(  # a title is the model's words: shown, never obeyed by the terminal
            terminal_safe(f"{name} *" if info.key == current else name),
            terminal_safe(info.title or ""),
            terminal_safe(info.personality or ""),
            str(info.message_count),
            when(info.updated_at),
        )
    return table


async def list_sessions(limit: int, *, subagents: bool = False) -> int:
    from rich.console import Console

    async with open_runtime() as runtime:
        infos = await runtime.list_sessions(limit, subagents=subagents)
    if not infos:
        print("no sessions yet: start one with seam chat or seam run")
        return 0
    Console(highlight=False).print(session_table(infos, runtime.session_name_of))
    return 0


async def show_session(name: str, as_json: bool) -> int:
    async with open_runtime() as runtime:
        key = session_key(runtime, name)
        info = await _existing(runtime, key, name)
        messages = await runtime.sessions.messages(key)
        totals = await runtime.sessions.usage_totals(key)
        submissions = await runtime.store.submissions(key)
    if as_json:
        from seam.apps.cli.durable import submission_dict

        body = {
            "key": key,
            "name": name,
            "messages": [message_to_dict(m) for m in messages],
            "submissions": [submission_dict(s) for s in submissions],
            "usage": usage_to_dict(totals),
        }
        sys.stdout.write(json_safe(json.dumps(body, ensure_ascii=False, indent=2)) + "\n")
        return 0
    style = Style.for_stream(sys.stdout)
    header = [f"session {name}"]
    if info.title:
        header.append(f"“{info.title}”")
    header += [
        f"personality {info.personality or '-'}",
        f"{info.message_count} messages",
        f"last activity {when(info.updated_at)}",
    ]
    lines = [style.bold(" · ".join(header)), style.dim(usage_line(totals)), ""]
    for message in messages:
        lines.extend(_transcript_lines(message, style))
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


async def export_sessions(name: str | None) -> int:
    """One session (by name, else by title) or every session, as JSON on stdout.

    The store's export format (`seam.contracts.sessions.session_to_dict`) with the
    session's public `name` added first."""
    async with open_runtime() as runtime:
        if name is None:
            exported = await runtime.sessions.export_all()
            body: object = [named_export(runtime, item) for item in exported]
        else:
            key = await _key_of_name_or_title(runtime, name)
            body = named_export(runtime, await runtime.sessions.export(key))
    sys.stdout.write(json_safe(json.dumps(body, ensure_ascii=False, indent=2)) + "\n")
    return 0


_AGE = re.compile(r"(\d+(?:\.\d+)?)([hdw])")
_DAYS_PER_UNIT = {"h": 1 / 24, "d": 1.0, "w": 7.0}


def parse_age(text: str) -> float:
    """`90d`, `12h`, `2w` (hours, days, weeks) as days; anything else is a usage error."""
    match = _AGE.fullmatch(text.strip().lower())
    if match is None:
        raise CliError(
            f"--older-than takes an age like 90d, 12h or 2w (hours, days, weeks), not {text!r}",
            USAGE,
        )
    return float(match.group(1)) * _DAYS_PER_UNIT[match.group(2)]


async def prune_sessions(older_than: str) -> int:
    days = parse_age(older_than)  # before anything is opened: a typo deletes nothing
    async with open_runtime() as runtime:
        pruned = await runtime.sessions.prune(days)
        # The pruned sessions' checkpoints go with them (and any over the budget).
        freed = await runtime.checkpoints.prune_gone() if runtime.checkpoints else 0
    age = older_than.strip()
    if freed:
        print(f"freed {freed / 1e6:.1f} MB of checkpoints")
    if pruned:
        noun = "session" if pruned == 1 else "sessions"
        print(f"pruned {pruned} ended {noun} with no activity for {age}")
    else:
        print(f"nothing to prune: no ended session has been idle for {age}")
    return 0


def named_export(runtime: Runtime, exported: dict[str, Any]) -> dict[str, Any]:
    """An exported session (the store's `session_to_dict`) with its public `name` first:
    what `seam sessions export` prints and the web API's export serves."""
    return {"name": runtime.session_name_of(exported["key"]), **exported}


async def _key_of_name_or_title(runtime: Runtime, name: str) -> str:
    try:
        key: str | None = runtime.session_key_for(name)
    except ValueError:  # not a valid public name; it may still be a title
        key = None
    if key is not None and await runtime.sessions.get(key) is not None:
        return key
    titled = await runtime.sessions.find_by_title(name)
    if titled is not None:
        return titled.key
    raise CliError(f"no session named or titled {name!r} (see: seam sessions list)")


async def _existing(runtime: Runtime, key: str, name: str) -> SessionInfo:
    info = await runtime.sessions.get(key)
    if info is None:
        raise CliError(f"no session named {name!r} (see: seam sessions list)")
    return info


def _transcript_lines(message: Message, style: Style) -> list[str]:
    """A message as a person reads it: tool traffic indented and cut to one line each."""
    if message.role == "tool":
        content = message.content.strip()
        more = content.count("\n")
        preview = shorten(first_line(content), RESULT_PREVIEW_CHARS)
        extra = f" (+{more} lines)" if more else ""
        return [style.dim(f"  → {message.name or 'tool'}: {preview}{extra}")]
    lines: list[str] = []
    if message.content or not message.tool_calls:
        label = style.bold(ROLE_LABELS.get(message.role, message.role) + ":")
        cut = style.yellow(" [interrupted]") if message.interrupted else ""
        lines.append(f"{label} {style.plain(message.content.strip())}{cut}")
    for call in message.tool_calls:
        lines.append(style.dim(f"  ⚙ {call.name} {arguments_preview(call.arguments)}"))
    return lines
