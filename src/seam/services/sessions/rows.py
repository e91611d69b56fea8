"""Rows of the SQL stores (SQLite and PostgreSQL) to and from the contract's dataclasses.

The backends store the same columns; they differ only in how text comes back (SQLite
returns `str`, the PostgreSQL store keeps user and model text in `bytea`, as PostgreSQL
`text` cannot hold NUL), so the readers take that conversion as a function.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import astuple, replace
from operator import attrgetter
from typing import Any

from seam.contracts.context import CompactionRecord
from seam.contracts.execution import EventRecord, Submission
from seam.contracts.images import as_stored
from seam.contracts.messages import ImagePart, Message, ToolCall, Usage
from seam.contracts.sessions import SessionInfo, UsageRecord, UsageTotals

SESSION_COLUMNS = (
    "key, title, personality, created_at, updated_at, message_count, parent_key, ended,"
    " tenant, tools, model, ended_at, working_dir"
)
MESSAGE_COLUMNS = "role, content, tool_calls, tool_call_id, name, interrupted, images"
SUBMISSION_COLUMNS = (
    "id, session_key, input, state, created_at, updated_at, personality, outcome, attempts,"
    " max_attempts, lease_owner, lease_expires_at, not_before, abort_requested, steps, result,"
    " error, finish_reason, settled_at, images"
)

USAGE_COLUMNS = (
    "session_key, turn_id, provider, model, input_tokens, output_tokens, cache_read_tokens,"
    " cache_write_tokens, reasoning_tokens, cost_usd, created_at"
)
EVENT_COLUMNS = "session_key, seq, first_seq, type, payload, submission_id"


# A session's events after a sequence number, and whether it exists, in one statement:
# no row, no session; one row of NULLs, a session with no such event. `?` and `%s` are
# swapped in for psycopg (`session_events_sql`).
_SESSION_EVENTS = (
    "SELECT e.session_key, e.seq, e.first_seq, e.type, e.payload, e.submission_id"
    " FROM sessions AS s LEFT JOIN events AS e ON e.session_key = s.key AND e.seq > {mark}"
    " WHERE s.key = {mark} ORDER BY e.seq"
)
SESSION_EVENTS = _SESSION_EVENTS.format(mark="?")
SESSION_EVENTS_PG = _SESSION_EVENTS.format(mark="%s")


def session_events_from(
    rows: Sequence[Sequence[Any]], record: Callable[[Sequence[Any]], EventRecord]
) -> list[EventRecord] | None:
    """`SESSION_EVENTS`' rows as the store's answer (`record` builds one from a row)."""
    if not rows:
        return None
    return [record(row) for row in rows if row[1] is not None]


def marks(columns: str, mark: str) -> str:
    """One placeholder per column of `columns`: `mark` is `?` (SQLite) or `%s` (psycopg)."""
    return ", ".join([mark] * len(columns.split(",")))


def insert_sql(table: str, columns: str, mark: str) -> str:
    """`INSERT INTO table (columns) VALUES (...)`, one `mark` per column."""
    return f"INSERT INTO {table} ({columns}) VALUES ({marks(columns, mark)})"


def usage_params(key: str, record: UsageRecord, now: float) -> tuple[Any, ...]:
    """A `USAGE_COLUMNS` row for one model call's usage."""
    u = record.usage
    return (
        key,
        record.turn_id,
        record.provider,
        record.model,
        u.input_tokens,
        u.output_tokens,
        u.cache_read_tokens,
        u.cache_write_tokens,
        u.reasoning_tokens,
        record.cost_usd,
        now,
    )


def event_params(record: EventRecord) -> tuple[Any, ...]:
    """An `EVENT_COLUMNS` row."""
    r = record
    return (r.session_key, r.seq, r.first_seq, r.type, r.payload, r.submission_id)


# `event_params` as one C call (for `executemany` over a batch: no Python frame a row).
event_rows: Callable[[EventRecord], tuple[Any, ...]] = attrgetter(
    "session_key", "seq", "first_seq", "type", "payload", "submission_id"
)


# Turns a stored text column into `str` (None stays None).
Text = Callable[[Any], Any]


def _same(value: Any) -> Any:
    return value


def session_from_row(
    row: Sequence[Any], tools: Callable[[Any], Sequence[str]] = json.loads
) -> SessionInfo:
    """A `SESSION_COLUMNS` row; `tools` reads the stored tool-name list (SQLite keeps it
    as JSON text, PostgreSQL as an array)."""
    key, title, personality, created, updated, count, parent_key, ended = row[:8]
    tenant, names, model, ended_at, working_dir = row[8:]
    return SessionInfo(
        key,
        title,
        personality,
        created,
        updated,
        count,
        parent_key,
        bool(ended),
        tenant,
        None if names is None else tuple(tools(names)),
        model,
        ended_at,
        working_dir,
    )


# One encoder for every row: `json.dumps` with options builds a new one per call.
_compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def dump_calls(calls: tuple[ToolCall, ...]) -> str | None:
    """Tool calls as compact JSON (None for none); json escapes NUL and control characters."""
    if not calls:
        return None
    return _compact_json([{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls])


def message_from_row(row: Sequence[Any], text: Text = _same) -> Message:
    """A `MESSAGE_COLUMNS` row; its images are stand-ins until the store's read swaps in
    the stored ones (`hydrate`, below)."""
    role, content, calls, call_id, name, interrupted, images = row
    return Message(
        role,
        text(content),
        () if calls is None else tuple(ToolCall(**c) for c in json.loads(calls)),
        call_id,
        name,
        bool(interrupted),
        () if images is None else stand_ins(images),  # most rows show none: no call
    )


def message_params(message: Message) -> tuple[Any, ...]:
    """A `MESSAGE_COLUMNS` row for a message (its images by hash: see `hydrate`)."""
    m = message
    calls = dump_calls(m.tool_calls)
    return (m.role, m.content, calls, m.tool_call_id, m.name, m.interrupted, message_images(m))


def submission_from_row(row: Sequence[Any], text: Text = _same) -> Submission:
    """A `SUBMISSION_COLUMNS` row; `text` reads the input, result and error columns."""
    (sid, key, input_, state, created, updated, personality, outcome, attempts) = row[:9]
    (max_attempts, owner, expires, not_before, abort, steps, result, error) = row[9:17]
    finish, settled_at, images = row[17:]
    return Submission(
        id=sid,
        session_key=key,
        input=text(input_),
        state=state,
        created_at=created,
        updated_at=updated,
        personality=personality,
        outcome=outcome,
        attempts=attempts,
        max_attempts=max_attempts,
        lease_owner=owner,
        lease_expires_at=expires,
        not_before=not_before,
        abort_requested=bool(abort),
        steps=steps,
        result=None if result is None else text(result),
        error=None if error is None else text(error),
        finish_reason=finish,
        settled_at=settled_at,
        images=hashes_of(images),
    )


# A compactions row past its session key, in `CompactionRecord`'s field order.
COMPACTION_COLUMNS = (
    "marker_index, tail_start, messages_before, messages_after, tokens_before, tokens_after,"
    " duration_ms, reason, summarised, created_at"
)


def compaction_params(key: str, record: CompactionRecord, now: float) -> tuple[Any, ...]:
    """An INSERT's parameters for `session_key, COMPACTION_COLUMNS`: the record's fields in
    their order (the columns' order), created now unless the record says when."""
    stamped = replace(record, created_at=record.created_at or now)
    return (key, *astuple(stamped))


def compaction_from_row(row: Sequence[Any]) -> CompactionRecord:
    """A compactions row (marker_index .. created_at, in the record's field order); SQLite
    keeps `summarised` as 0 or 1."""
    marker, tail, messages_before, messages_after, tokens_before, tokens_after = row[:6]
    duration_ms, reason, summarised, created_at = row[6:]
    return CompactionRecord(
        marker,
        tail,
        messages_before,
        messages_after,
        tokens_before,
        tokens_after,
        duration_ms,
        reason,
        summarised=bool(summarised),
        created_at=created_at,
    )


def usage_totals_from(row: Sequence[Any]) -> UsageTotals:
    """A usage-totals row (count, the five token sums, cost, unpriced calls): the same
    aggregate in both stores."""
    return UsageTotals(
        calls=row[0],
        usage=Usage(*(int(n) for n in row[1:6])),
        cost_usd=float(row[6]),
        unpriced_calls=row[7],
    )


# A person's images. An image is stored once, in `image_blobs`, keyed by its SHA-256 (the
# same photo sent twice, or in two sessions, is one row). A transcript message and a
# submission refer to theirs by a JSON list of hashes in their `images` column, so a
# session's rows stay the size of its text. A message read back carries a stand-in per
# hash (no bytes) until `hydrate` swaps in the stored image: the stores do that in the
# same read (`sqlite_images.py`, `postgres_images.py`).

BLOB_COLUMNS = "sha256, mime_type, size, data, created_at"


def hashes_column(images: Sequence[ImagePart]) -> str | None:
    """The `images` column of a row that shows `images` (None: it shows none)."""
    return json.dumps([image.sha256 for image in images]) if images else None


def message_images(message: Message) -> str | None:
    """A transcript row's `images` column: a person's images only (`as_stored`)."""
    return hashes_column(as_stored(message).images) if message.images else None


def hashes_of(column: str | None) -> tuple[str, ...]:
    return () if column is None else tuple(json.loads(column))


def stand_ins(column: str | None) -> tuple[ImagePart, ...]:
    """The images of a stored row before `hydrate`: their hashes only."""
    return tuple(ImagePart("", "", digest, 0) for digest in hashes_of(column))


def wanted(messages: Iterable[Message]) -> list[str]:
    """The hashes the messages' stand-ins name, each once."""
    return list(dict.fromkeys(i.sha256 for m in messages for i in m.images))


def hydrate(messages: list[Message], found: Mapping[str, ImagePart]) -> list[Message]:
    """The messages with each stand-in replaced by its stored image."""
    if not found:
        return messages
    out = []
    for message in messages:
        if message.images:
            shown = tuple(found[i.sha256] for i in message.images if i.sha256 in found)
            message = replace(message, images=shown)
        out.append(message)
    return out


def blob_params(images: Iterable[ImagePart], now: float) -> list[tuple[Any, ...]]:
    """`BLOB_COLUMNS` rows for the images (each hash once)."""
    unique = {image.sha256: image for image in images}
    return [(i.sha256, i.mime_type, i.size, base64.b64decode(i.data), now) for i in unique.values()]


def image_from_blob(row: Sequence[Any]) -> ImagePart:
    """An `image_blobs` row (sha256, mime_type, size, data) as the image it holds."""
    digest, mime, size, data = row
    return ImagePart(mime, base64.b64encode(bytes(data)).decode("ascii"), digest, size)


def shown_images(messages: Iterable[Message]) -> list[ImagePart]:
    """The images a batch of transcript messages stores (a person's, not a tool's)."""
    return [image for m in messages if m.images for image in as_stored(m).images]
