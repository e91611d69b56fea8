"""What of an append-only transcript the model is sent, once compaction has happened.

The store keeps every message forever (search, export and undo need them). A compaction
appends one *marker*: a `system` message named `compaction:<tail_start>:<clear_before>`
whose content is the summary of everything between the protected head and `tail_start`.
The request history is then

    transcript[:head] + [summary] + transcript[tail_start:] (markers left out)

with tool results (and oversized tool arguments) before `clear_before` replaced by a short
stub. Only the latest marker counts, and it carries everything it needs, so the boundary
is written atomically with the summary, survives restarts, and a marker removed by an
undo simply takes its compaction with it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from seam.contracts.messages import Message

MARKER_PREFIX = "compaction:"
SUMMARY_HEADER = (
    "[Summary of the earlier conversation, written by the system to save context; "
    "the messages it replaces are no longer shown.]\n\n"
)
# Tool results and call arguments longer than this are cleared before `clear_before`.
CLEAR_MIN_CHARS = 300


def make_marker(summary: str, tail_start: int, clear_before: int) -> Message:
    return Message("system", summary, name=f"{MARKER_PREFIX}{tail_start}:{clear_before}")


def parse_marker(message: Message) -> tuple[int, int] | None:
    """(tail_start, clear_before) of a compaction marker; None for any other message."""
    name = message.name
    if message.role != "system" or not name or not name.startswith(MARKER_PREFIX):
        return None
    tail, _, clear = name[len(MARKER_PREFIX) :].partition(":")
    try:
        return int(tail), int(clear or tail)
    except ValueError:
        return None


def head_end(transcript: Sequence[Message], protect_first: int) -> int:
    """End of the protected head: the first messages, never ending between a tool call
    and its results."""
    end = min(protect_first, len(transcript))
    while end < len(transcript) and transcript[end].role == "tool":
        end += 1
    return end


@dataclass(frozen=True, slots=True)
class HistoryView:
    """The request history and where each of its messages comes from."""

    messages: list[Message]
    # Transcript index of each message; -1 for the summary.
    indices: list[int]
    # Messages in the protected head (the summary, if any, comes right after them).
    head: int
    summary: str
    tail_start: int
    clear_before: int


def history_view(transcript: Sequence[Message], protect_first: int = 3) -> HistoryView:
    count = len(transcript)
    latest: tuple[int, tuple[int, int]] | None = None
    for index in range(count - 1, -1, -1):
        message = transcript[index]
        if message.role == "system" and message.name:
            parsed = parse_marker(message)
            if parsed is not None:
                latest = (index, parsed)
                break
    head = head_end(transcript, protect_first)
    if latest is None:  # the scan above saw every message: there are no markers
        return HistoryView(list(transcript), list(range(count)), head, "", head, head)
    marker_index, (tail_start, clear_before) = latest
    summary = transcript[marker_index].content
    tail_start = min(max(tail_start, head), count)
    messages = list(transcript[:head])
    indices = list(range(head))
    if summary:
        messages.append(summary_message(summary))
        indices.append(-1)
    for index in range(tail_start, count):
        message = transcript[index]
        if parse_marker(message) is not None:
            continue
        messages.append(cleared(message) if index < clear_before else message)
        indices.append(index)
    return HistoryView(messages, indices, head, summary, tail_start, clear_before)


NO_RESULT = "no result: this call's turn ended before the tool finished"


def answer_dangling(messages: list[Message]) -> list[Message]:
    """`messages` with a stand-in result after every tool call that has none.

    Every call must be answered before the conversation goes on; a turn that failed
    mid-tool (its attempts ran out, it crashed) can leave calls unanswered in the
    stored transcript. The stand-ins are for the request only: the transcript keeps
    what happened. Returns `messages` itself when nothing is missing (the usual case).
    """
    # Two set comprehensions: this runs over the whole history every turn.
    answered = {m.tool_call_id for m in messages if m.role == "tool"}
    if {c.id for m in messages if m.tool_calls for c in m.tool_calls} <= answered:
        return messages
    out: list[Message] = []
    pending: list[Message] = []
    for message in messages:
        if message.role != "tool" and pending:
            out.extend(pending)
            pending = []
        out.append(message)
        missing = [c for c in message.tool_calls if c.id not in answered]
        if missing:
            pending = [Message("tool", NO_RESULT, tool_call_id=c.id, name=c.name) for c in missing]
    out.extend(pending)
    return out


def summary_message(summary: str) -> Message:
    """How the summary is sent. As the person's side of the conversation, not as a system
    message: it condenses tool output that may hold injected text, which must not gain a
    system prompt's authority, and the system prompt itself stays byte-stable."""
    return Message("user", summary)


def cleared(message: Message) -> Message:
    """A message with its bulky tool output (or tool arguments) replaced by a stub."""
    if message.role == "tool" and len(message.content) > CLEAR_MIN_CHARS:
        return replace(
            message,
            content=f"[old tool result cleared to save context; it was {len(message.content):,}"
            " chars. Run the tool again if it is needed.]",
        )
    if message.tool_calls and any(len(c.arguments) > CLEAR_MIN_CHARS for c in message.tool_calls):
        calls = tuple(
            replace(
                c, arguments=json.dumps({"cleared": f"{len(c.arguments):,} chars of arguments"})
            )
            if len(c.arguments) > CLEAR_MIN_CHARS
            else c
            for c in message.tool_calls
        )
        return replace(message, tool_calls=calls)
    return message


@dataclass(frozen=True, slots=True)
class Split:
    """Where a compaction cuts the current view: head | middle | protected tail."""

    middle: list[Message]  # the old summary (if any) and the messages to summarise
    middle_count: int  # messages in the middle that are not the old summary
    tail_start: int  # transcript index of the first protected tail message


def split(view: HistoryView, protect_last: int) -> Split | None:
    """The middle to compact, or None when everything is protected."""
    messages, indices = view.messages, view.indices
    first = view.head + (1 if view.summary else 0)
    # The newest message always stays (it is what the model must answer).
    start = min(max(first, len(messages) - protect_last), len(messages) - 1)
    # Never split a tool call from its results: a tail opening on a tool result takes
    # the assistant message that made the call with it.
    while start > first and messages[start].role == "tool":
        start -= 1
    middle_count = start - first
    if middle_count <= 0:
        return None
    return Split(messages[view.head : start], middle_count, indices[start])
