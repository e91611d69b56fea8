"""A running turn's step (`append_for`) and its settlement (`settle`) on PostgreSQL, each
written by ONE statement: one command and one round trip, whatever the step holds.

Why: in pipeline mode a step cost one round trip to read the lease and one to commit,
but psycopg still spends an event-loop cycle on every statement it queues (BEGIN, the
lease check, the session's count, each message, event and usage row, the submission,
COMMIT: about twenty per submission), and that was most of a worker's CPU.

How: data-modifying CTEs in one statement, so one implicit transaction. The first CTE,
`sub`, takes the submission's row lock and checks the lease in its WHERE clause (an
UPDATE when the submission changes, else SELECT ... FOR NO KEY UPDATE); in READ
COMMITTED a row changed since the statement's snapshot is checked again on its newest
version, so a lease taken over meanwhile is seen. Every other write reads `sub`, so
nothing is written when the lease is not held: the statement returns no row and the
caller reads the submission to say why (`check_holder`). The messages' indexes come from
the session's count, bumped by this statement (the bump's row lock queues appends to one
session). Rows of any number go as parallel arrays through `unnest`, sent in binary (text arrays
escape every quote of every JSON payload with a regular expression) and typed in advance
(`postgres_arrays`); a message's search words as one space-joined string (a word never
holds a space).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from seam.contracts.execution import JournalEntry, Settlement
from seam.contracts.messages import Message
from seam.services.sessions.postgres_arrays import (
    BigintArray,
    BoolArray,
    ByteaArray,
    Float8Array,
    IntArray,
    TextArray,
)
from seam.services.sessions.postgres_rows import encode
from seam.services.sessions.postgres_text import message_words
from seam.services.sessions.rows import (
    SUBMISSION_COLUMNS,
    blob_params,
    event_params,
    message_params,
    shown_images,
)

# Whether the caller may write: it holds the lease, or (no owner: a settle) the
# submission is still queued, as `check_holder` says.
_OWNS = (
    "CASE WHEN %(owner)s::text IS NULL THEN state = 'queued'"
    " ELSE state = 'running' AND lease_owner = %(owner)s END"
)
# A settlement, or the abort it was asked to honour (`Settlement.for_submission`).
_ABORTS = "%(unless_aborted)s AND abort_requested"
_SETTLE = (
    "state = 'settled', lease_owner = NULL, lease_expires_at = NULL, settled_at = %(now)s,"
    f" outcome = CASE WHEN {_ABORTS} THEN 'aborted' ELSE %(outcome)s END,"
    f" result = CASE WHEN {_ABORTS} THEN NULL ELSE %(result)s::bytea END,"
    f" error = CASE WHEN {_ABORTS} THEN NULL ELSE %(error)s::bytea END,"
    f" finish_reason = CASE WHEN {_ABORTS} THEN 'aborted' ELSE %(finish_reason)s END"
)
_BUMP = """bump AS (
    UPDATE sessions SET message_count = message_count + %(n)s::int, updated_at = %(now)s
    WHERE key = (SELECT session_key FROM sub) RETURNING key, message_count, cuts, created_at
)"""
_MESSAGES = """msgs AS (
    INSERT INTO messages (session_key, idx, role, content, tool_calls, tool_call_id, name,
        interrupted, images, submission_id, words)
    SELECT b.key, b.message_count - %(n)s::int + m.i::int - 1, m.role, m.content, m.calls,
        m.call_id, m.name, m.interrupted, m.images, %(id)s, string_to_array(m.words, ' ')
    FROM bump AS b, unnest(%(roles)b::text[], %(contents)b::bytea[], %(calls)b::text[],
        %(call_ids)b::text[], %(names)b::text[], %(interrupted)b::bool[],
        %(images)b::text[], %(words)b::text[])
        WITH ORDINALITY AS m(role, content, calls, call_id, name, interrupted, images,
        words, i)
)"""
_BLOBS = """blobs AS (
    INSERT INTO image_blobs (sha256, mime_type, size, data, created_at)
    SELECT b.*, %(now)s FROM unnest(%(blob_sha)b::text[], %(blob_mime)b::text[],
        %(blob_size)b::int[], %(blob_data)b::bytea[]) AS b
    WHERE EXISTS (SELECT 1 FROM sub) ON CONFLICT (sha256) DO NOTHING
)"""
_EVENTS = """events AS (
    INSERT INTO events (session_key, seq, first_seq, type, payload, submission_id)
    SELECT e.* FROM unnest(%(ev_key)b::text[], %(ev_seq)b::bigint[],
        %(ev_first)b::bigint[], %(ev_type)b::text[], %(ev_payload)b::text[],
        %(ev_sub)b::text[]) AS e
    WHERE EXISTS (SELECT 1 FROM sub)
)"""
_USAGE = """usage_rows AS (
    INSERT INTO usage (session_key, turn_id, provider, model, input_tokens, output_tokens,
        cache_read_tokens, cache_write_tokens, reasoning_tokens, cost_usd, created_at)
    SELECT s.session_key, u.*, %(now)s FROM sub AS s, unnest(%(u_turn)b::text[],
        %(u_provider)b::text[], %(u_model)b::text[], %(u_in)b::bigint[],
        %(u_out)b::bigint[], %(u_cread)b::bigint[], %(u_cwrite)b::bigint[],
        %(u_reason)b::bigint[], %(u_cost)b::float8[]) AS u
)"""


# After a step's columns: its session and the row's stamp once its messages are in.
STAMP_AFTER = "key, message_count, cuts, created_at"


@functools.lru_cache(maxsize=64)
def journal_sql(messages: bool, images: bool, events: bool, usage: bool, settle: bool) -> str:
    """The statement for a step of this shape (and its settlement when `settle`): it
    returns one row when written, the settled submission's columns for a settle, then
    the session's key and transcript stamp after its messages (`STAMP_AFTER`; NULLs
    without messages), then how many sessions its messages bumped (0: the session is
    gone)."""
    changes = [_SETTLE] if settle else []
    if messages:
        changes.append("steps = steps + %(n)s::int")
    if changes:
        sub = (
            f"sub AS (UPDATE submissions SET {', '.join(changes)}, updated_at = %(now)s"
            f" WHERE id = %(id)s AND {_OWNS} RETURNING {SUBMISSION_COLUMNS})"
        )
    else:
        sub = (
            f"sub AS (SELECT {SUBMISSION_COLUMNS} FROM submissions"
            f" WHERE id = %(id)s AND {_OWNS} FOR NO KEY UPDATE)"
        )
    ctes = [sub]
    ctes += [_BUMP, _MESSAGES] if messages else []
    ctes += [_BLOBS] if images else []
    ctes += [_EVENTS] if events else []
    ctes += [_USAGE] if usage else []
    bumped = "(SELECT count(*) FROM bump)" if messages else "1"
    stamp = ", ".join(
        f"(SELECT {c} FROM bump)" if messages else "NULL" for c in STAMP_AFTER.split(", ")
    )
    columns = SUBMISSION_COLUMNS if settle else "id"
    return f"WITH {', '.join(ctes)} SELECT {columns}, {stamp}, {bumped} FROM sub"


def journal_statement(
    submission_id: str,
    owner: str | None,
    entry: JournalEntry | None,
    now: float,
    settlement: Settlement | None = None,
) -> tuple[str, dict[str, Any]]:
    """The statement and its parameters for `entry` (and `settlement`)."""
    params: dict[str, Any] = {"id": submission_id, "owner": owner, "now": now}
    messages = entry.messages if entry is not None else ()
    images = blob_params(shown_images(messages), now) if messages else []
    events = entry.events if entry is not None else ()
    usage = entry.usage if entry is not None else ()
    if messages:
        params.update(_message_arrays(messages))
    if images:
        sha, mime, size, data, _ = zip(*images, strict=True)
        params.update(blob_sha=TextArray(sha), blob_mime=TextArray(mime))
        params.update(blob_size=IntArray(size), blob_data=ByteaArray(data))
    if events:
        columns = zip(*(event_params(r) for r in events), strict=True)
        for (name, array), column in zip(_EVENT_PARAMS, columns, strict=True):
            params[name] = array(column)
    if usage:
        params.update(_usage_arrays(usage))
    if settlement is not None:
        params.update(
            unless_aborted=settlement.unless_aborted,
            outcome=settlement.outcome,
            result=encode(settlement.result),
            error=encode(settlement.error),
            finish_reason=settlement.finish_reason,
        )
    shape = (bool(messages), bool(images), bool(events), bool(usage), settlement is not None)
    return journal_sql(*shape), params


# Each parameter's name and what makes its array of a column, in `event_params`' and
# `message_params`' order.
_EVENT_PARAMS: tuple[tuple[str, Callable[[Iterable[Any]], list[Any]]], ...] = (
    ("ev_key", TextArray),
    ("ev_seq", BigintArray),
    ("ev_first", BigintArray),
    ("ev_type", TextArray),
    ("ev_payload", TextArray),
    ("ev_sub", TextArray),
)
_MESSAGE_PARAMS: tuple[tuple[str, Callable[[Iterable[Any]], list[Any]]], ...] = (
    ("roles", TextArray),
    ("contents", lambda column: ByteaArray(map(encode, column))),
    ("calls", TextArray),
    ("call_ids", TextArray),
    ("names", TextArray),
    ("interrupted", BoolArray),
    ("images", TextArray),
)


def _message_arrays(messages: Sequence[Message]) -> dict[str, Any]:
    rows = [message_params(m) for m in messages]
    params: dict[str, Any] = {
        name: array(column)
        for (name, array), column in zip(_MESSAGE_PARAMS, zip(*rows, strict=True), strict=True)
    }
    params["n"] = len(messages)
    params["words"] = TextArray(_words(m) for m in messages)
    return params


def _words(message: Message) -> str | None:
    words = message_words(message.role, message.content)
    return None if words is None else " ".join(words)


def _usage_arrays(usage: Sequence[Any]) -> dict[str, Any]:
    return {
        "u_turn": TextArray(r.turn_id for r in usage),
        "u_provider": TextArray(r.provider for r in usage),
        "u_model": TextArray(r.model for r in usage),
        "u_in": BigintArray(r.usage.input_tokens for r in usage),
        "u_out": BigintArray(r.usage.output_tokens for r in usage),
        "u_cread": BigintArray(r.usage.cache_read_tokens for r in usage),
        "u_cwrite": BigintArray(r.usage.cache_write_tokens for r in usage),
        "u_reason": BigintArray(r.usage.reasoning_tokens for r in usage),
        "u_cost": Float8Array(r.cost_usd for r in usage),
    }
