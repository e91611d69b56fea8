"""Claiming a submission on PostgreSQL, for `PostgresSubmissions.claim`.

The rules: a pick takes the oldest runnable submission with
`FOR NO KEY UPDATE OF submission, session SKIP LOCKED`, so concurrent claimers never
wait on each other and never take the same row, and a session being claimed by one
worker is skipped by the others. Under those locks a fresh statement re-checks that the
session has no other running submission and no earlier due one still queued: every
claim of a queued submission holds its session's row lock until it commits, so the
re-check sees any claim that won the race, and a row skipped only because another
transaction held it locked is not overtaken by the next one of its session.
At most one submission per session runs at a time (stricter than "no live lease": a
queued submission also waits behind a running one whose lease ran out, which is
reclaimed first).

Two ways to do it. `claim_at_once`, the usual one: two statements sent together in one
implicit transaction (pipeline mode, no BEGIN: the transaction ends at the pipeline's
sync), one round trip. The pick notes the id it locked in a transaction-local setting
(`seam.claim`) and relaxes this transaction's commit; the second statement, a fresh
snapshot taken after the pick's locks, claims that id only when it is still runnable
with attempts left. When it is not (a race lost, a session found busy, no attempts
left), `claim_step_by_step` reads, decides in Python and settles a submission out of
attempts as failed, a round trip per step.

Claims do not wait for the WAL flush at commit: the turn's first durable write carries
them (`relax_commit`).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from psycopg import AsyncConnection, sql

from seam.contracts.execution import Submission
from seam.contracts.sessions import SessionInfo
from seam.services.sessions.postgres_arrays import TextArray
from seam.services.sessions.postgres_channels import CHANNEL
from seam.services.sessions.postgres_pipeline import pipelined, read_point, relax_commit
from seam.services.sessions.postgres_rows import (
    prefixed,
    returned,
    session_from_row,
    submission_from_row,
)
from seam.services.sessions.rows import SESSION_COLUMNS, SUBMISSION_COLUMNS
from seam.services.sessions.transcript_copies import Stamp

# Runnable, as the contract says; `%(now)s` and `%(dead)s` are bound per claim. Both
# rules are CASE expressions, not ORs of states: an OR of `state = 'queued'` and
# `state = 'running'` lets the planner answer the pick from the partial indexes of
# `CLAIM_INDEXES` (a BitmapOr of every open submission, then a sort) instead of walking
# `submissions_open` in admission order until the first runnable one, and a prepared
# pick's generic plan took that road: 4 ms a claim with 2,000 queued.
_RUNNABLE = """CASE s.state
    WHEN 'queued' THEN s.not_before <= %(now)s AND NOT EXISTS (
        SELECT 1 FROM submissions AS r
        WHERE r.session_key = s.session_key AND r.state = 'running')
    WHEN 'running' THEN s.lease_expires_at IS NULL OR s.lease_expires_at <= %(now)s
        OR s.lease_owner = ANY (%(dead)s::text[])
    ELSE false
END"""
# A queued submission waits behind any earlier one of its session that is due, as in the
# other stores, where the oldest runnable one is found by a scan in admission order. Here
# the scan skips rows other transactions hold locked (SKIP LOCKED), and a claimer that
# skipped a session because its session row was taken may still hold the lock on that
# session's next submission (row locks last until the transaction ends), as does an
# admission re-sending an existing id: without this rule the submission after it would
# be claimed first. Not for a claim of one named submission (the caller chose it).
# Said as "the first due queued one of its session is this one": ordered by the
# `submissions_queued` index's columns, the planner reads that index; an EXISTS over
# `seq < s.seq` let it walk the primary key from the table's first row instead.
_IN_ORDER = """CASE WHEN s.state = 'queued' THEN s.seq = (
    SELECT e.seq FROM submissions AS e
    WHERE e.session_key = s.session_key AND e.state = 'queued' AND e.not_before <= %(now)s
    ORDER BY e.session_key, e.seq LIMIT 1)
    ELSE true
END"""
# What the two rules' subqueries read: a session's running submission and its queued
# ones in order. Without them, the running check read every submission in the table
# (a hashed subplan over a sequential scan) and the order check every earlier one of
# the session, settled or not: a claim's cost grew with the history.
CLAIM_INDEXES = (
    "CREATE INDEX IF NOT EXISTS submissions_running ON submissions (session_key)"
    " WHERE state = 'running'",
    "CREATE INDEX IF NOT EXISTS submissions_queued ON submissions (session_key, seq)"
    " WHERE state = 'queued'",
)


@dataclass(frozen=True, slots=True)
class ClaimAsk:
    """One claim: who asks, when, until when the lease runs, which owners are known dead
    and (`submission_id`) the one submission it may take."""

    owner: str
    now: float
    until: float
    dead: list[str]
    submission_id: str | None

    def params(self, skip: list[str]) -> dict[str, Any]:
        return {
            "owner": self.owner,
            "now": self.now,
            "until": self.until,
            "dead": TextArray(self.dead),
            "id": self.submission_id,
            "skip": TextArray(skip),
        }


@functools.lru_cache(maxsize=2)
def _pick(only_one: bool) -> sql.Composed:
    """The oldest runnable submission, it and its session row locked (skipping locked
    ones and the sessions in `%(skip)s`)."""
    return sql.SQL(
        "SELECT s.id FROM submissions AS s JOIN sessions AS k ON k.key = s.session_key"
        " WHERE s.state <> 'settled' AND {runnable}{order}{only}"
        " AND NOT (s.session_key = ANY (%(skip)s::text[]))"
        " ORDER BY s.seq LIMIT 1 FOR NO KEY UPDATE OF s, k SKIP LOCKED"
    ).format(
        runnable=sql.SQL(_RUNNABLE),
        order=sql.SQL("" if only_one else f" AND {_IN_ORDER}"),
        only=sql.SQL(" AND s.id = %(id)s" if only_one else ""),
    )


@functools.lru_cache(maxsize=2)
def _pick_and_note(only_one: bool) -> sql.Composed:
    """The pick, noting the picked id in `seam.claim` (a subquery, so the outer list runs
    for the locked row alone), relaxing the commit and sending `%(note)s` on `CHANNEL`
    when given; one row either way, whose id is NULL when nothing was picked."""
    return sql.SQL(
        "SELECT p.id, set_config('synchronous_commit', 'off', true),"
        " CASE WHEN %(note)s::text IS NOT NULL THEN pg_notify(%(channel)s, %(note)s) END,"
        " CASE WHEN p.id IS NOT NULL THEN set_config('seam.claim', p.id, true) END"
        " FROM (SELECT) AS one LEFT JOIN ({pick}) AS p ON true"
    ).format(pick=_pick(only_one))


_SUBMISSION_WIDTH = SUBMISSION_COLUMNS.count(",") + 1
# The session's last event, read with the claim: the turn asks for it next (`SeqHint`).
_LAST_SEQ = "(SELECT coalesce(max(e.seq), 0) FROM events AS e WHERE e.session_key = s.session_key)"


@dataclass(frozen=True, slots=True)
class Claimed:
    """What `claim_at_once` found: whether it picked a submission, the one it claimed
    (None: nothing picked, or the pick is left to `claim_step_by_step`) and, claimed, the
    last event seq of its session as the claim saw it."""

    picked: bool
    submission: Submission | None = None
    last_seq: int = 0
    # Its session's row and transcript stamp as the claim saw them (`LoadHint`).
    session: SessionInfo | None = None
    stamp: Stamp | None = None


@functools.lru_cache(maxsize=2)
def _claim_noted(only_one: bool) -> sql.Composed:
    """The noted submission claimed, if it is still runnable with attempts left."""
    return sql.SQL(
        "UPDATE submissions AS s SET state = 'running', attempts = s.attempts + 1,"
        " lease_owner = %(owner)s, lease_expires_at = %(until)s, updated_at = %(now)s"
        " FROM sessions AS k WHERE s.id = current_setting('seam.claim', true)"
        " AND k.key = s.session_key"
        " AND s.attempts < s.max_attempts AND {runnable}{order}"
        f" RETURNING {prefixed(SUBMISSION_COLUMNS, 's')}, {_LAST_SEQ},"
        f" {prefixed(SESSION_COLUMNS, 'k')}, k.cuts"
    ).format(
        runnable=sql.SQL(_RUNNABLE),
        order=sql.SQL("" if only_one else f" AND {_IN_ORDER}"),
    )


async def claim_at_once(
    conn: AsyncConnection[Any], ask: ClaimAsk, note: str | None = None
) -> Claimed:
    """The claim in one round trip (see `Claimed`). `note`: a NOTIFY payload sent in the
    same transaction (a settlement's, `_owe_note`)."""
    only_one = ask.submission_id is not None
    params = {**ask.params([]), "note": note, "channel": CHANNEL}
    async with conn.pipeline():
        picked = await conn.execute(_pick_and_note(only_one), params)
        claimed = await conn.execute(_claim_noted(only_one), params)
    if (await returned(picked))[0] is None:
        return Claimed(False)
    row = await claimed.fetchone()
    if row is None:
        return Claimed(True)
    last = _SUBMISSION_WIDTH
    session = session_from_row(row[last + 1 : -1])
    stamp = (session.message_count, int(row[-1]), session.created_at)
    return Claimed(True, submission_from_row(row[:last]), int(row[last]), session, stamp)


# Settles `sub` as failed (no attempts left) in the claim's transaction, and notifies.
GiveUp = Callable[[AsyncConnection[Any], Submission, float], Awaitable[None]]


async def claim_step_by_step(
    conn: AsyncConnection[Any], ask: ClaimAsk, give_up: GiveUp
) -> Submission | None:
    """The claim in one transaction, a round trip per step: pick, re-check under the
    locks, give up on a submission out of attempts and pick again, or claim."""
    only_one = ask.submission_id is not None
    skip: list[str] = []
    async with pipelined(conn):
        await relax_commit(conn)
        while True:
            picked = await conn.execute(_pick(only_one), ask.params(skip))
            await read_point()
            row = await picked.fetchone()
            if row is None:
                return None
            sub, blocked = await _recheck(conn, row[0], ask.now, not only_one)
            if blocked or not _runnable(sub, ask.now, ask.dead):
                skip.append(sub.session_key)
                continue
            if sub.attempts < sub.max_attempts:
                break
            await give_up(conn, sub, ask.now)
        cur = await conn.execute(
            "UPDATE submissions SET state = 'running', attempts = attempts + 1,"
            " lease_owner = %s, lease_expires_at = %s, updated_at = %s"
            f" WHERE id = %s RETURNING {SUBMISSION_COLUMNS}",
            (ask.owner, ask.until, ask.now, sub.id),
        )
    return submission_from_row(await returned(cur))


# The picked submission read again, in a statement of its own (a fresh snapshot, taken
# after the pick locked its rows), with whether its session blocks it: another running
# submission, or (`in_order`) an earlier due one still queued (see `_IN_ORDER`).
_RECHECK = f"""SELECT {SUBMISSION_COLUMNS}, EXISTS (
    SELECT 1 FROM submissions AS o WHERE o.session_key = s.session_key AND o.id <> s.id
    AND (o.state = 'running' OR (%(in_order)s AND o.state = 'queued'
    AND o.not_before <= %(now)s AND o.seq < s.seq)))
FROM submissions AS s WHERE s.id = %(id)s FOR NO KEY UPDATE OF s"""


async def _recheck(
    conn: AsyncConnection[Any], submission_id: str, now: float, in_order: bool
) -> tuple[Submission, bool]:
    """Re-check a picked submission with a fresh snapshot, its rows locked: the
    submission as it is now, and whether its session blocks a queued one.

    The pick's snapshot may predate a claim that committed while it ran (row locks alone
    do not re-run its NOT EXISTS), so it may have seen a session idle that is now busy.
    Holding the session row, no claim of an earlier submission can be under way meanwhile.
    """
    cur = await conn.execute(_RECHECK, {"id": submission_id, "now": now, "in_order": in_order})
    await read_point()
    row = await returned(cur)
    sub = submission_from_row(row[:-1])
    return sub, sub.state == "queued" and bool(row[-1])


def _runnable(sub: Submission, now: float, dead: list[str]) -> bool:
    """Whether the re-read `sub` may be claimed now (its session not blocking it)."""
    if sub.state == "queued":
        return sub.not_before <= now
    if sub.state == "running":
        expires = sub.lease_expires_at
        return expires is None or expires <= now or sub.lease_owner in dead
    return False
