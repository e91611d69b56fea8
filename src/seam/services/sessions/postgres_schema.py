"""The PostgreSQL store's tables, as numbered migrations applied once per schema.

`seam_schema_version` holds how many migrations a schema has. `migrate` runs under a
transaction-scoped advisory lock keyed by the schema's name, so several processes (or
machines) opening a new database together apply each migration exactly once; the rest
wait for the lock and then find the work done.

Text a user or a model wrote (message content, a submission's input, result and error)
is stored as UTF-8 `bytea`: PostgreSQL's `text` cannot hold a NUL character and a
transcript must round-trip whatever was said. The words search looks for are extracted
in Python into `messages.words` (see `postgres_text`), so the rules are exactly those
of the other stores rather than PostgreSQL's own parser's.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from psycopg import AsyncConnection, sql
from psycopg.rows import TupleRow

from seam.services.sessions.checkpoint_rows import CHECKPOINTS_MIGRATION
from seam.services.sessions.postgres_claim import CLAIM_INDEXES
from seam.services.sessions.postgres_cron import CRON_MIGRATION
from seam.services.sessions.postgres_images import IMAGES_MIGRATION
from seam.services.sessions.postgres_outbox import OUTBOX_MIGRATION
from seam.services.sessions.postgres_text import message_words
from seam.services.sessions.postgres_transcripts import CUTS_MIGRATION
from seam.services.sessions.postgres_vectors import VECTORS_MIGRATION

# A statement, or a step only Python can do (the search rules live in Python).
Step = str | Callable[[AsyncConnection[TupleRow]], Awaitable[None]]


async def _stem_words(conn: AsyncConnection[TupleRow]) -> None:
    """Migration 3: the stored words of every searchable message become its terms (word
    stems), so "banana" finds "bananas" in messages written before, too."""
    cur = await conn.execute("SELECT id, role, content FROM messages WHERE words IS NOT NULL")
    rows = await cur.fetchall()
    updates = [
        (message_words(role, bytes(content).decode()), message_id)
        for message_id, role, content in rows
    ]
    if updates:
        async with conn.cursor() as writer:
            await writer.executemany("UPDATE messages SET words = %s WHERE id = %s", updates)


# Each migration is a list of statements run in one transaction. Append new ones, never
# edit a shipped one.
MIGRATIONS: tuple[tuple[Step, ...], ...] = (
    (
        """CREATE TABLE sessions (
            key text PRIMARY KEY,
            title text UNIQUE,
            personality text,
            parent_key text,
            created_at double precision NOT NULL,
            updated_at double precision NOT NULL,
            ended boolean NOT NULL DEFAULT false,
            message_count integer NOT NULL DEFAULT 0,
            tenant text,
            tools text[],
            model text,
            ended_at double precision
        )""",
        # Ties in recency go to the smaller key by code point, as in the other stores,
        # whatever the database's collation.
        'CREATE INDEX sessions_recent ON sessions (updated_at DESC, key COLLATE "C")',
        # Append-only: rows are inserted and deleted, never updated.
        """CREATE TABLE messages (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            session_key text NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
            idx integer NOT NULL,
            role text NOT NULL,
            content bytea NOT NULL,
            tool_calls text,
            tool_call_id text,
            name text,
            interrupted boolean NOT NULL DEFAULT false,
            submission_id text,
            -- Folded words of user and assistant messages; NULL for the rest.
            words text[],
            UNIQUE (session_key, idx)
        )""",
        "CREATE INDEX messages_words ON messages USING gin (words)",
        "CREATE INDEX messages_submission ON messages (submission_id)"
        " WHERE submission_id IS NOT NULL",
        """CREATE TABLE usage (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            session_key text NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
            turn_id text NOT NULL,
            provider text NOT NULL,
            model text NOT NULL,
            input_tokens bigint NOT NULL,
            output_tokens bigint NOT NULL,
            cache_read_tokens bigint NOT NULL,
            cache_write_tokens bigint NOT NULL,
            reasoning_tokens bigint NOT NULL,
            cost_usd double precision,
            created_at double precision NOT NULL
        )""",
        "CREATE INDEX usage_session ON usage (session_key)",
        """CREATE TABLE submissions (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id text NOT NULL UNIQUE,
            session_key text NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
            input bytea NOT NULL,
            personality text,
            state text NOT NULL CHECK (state IN ('queued', 'running', 'settled')),
            outcome text CHECK (outcome IN ('completed', 'failed', 'aborted')),
            attempts integer NOT NULL DEFAULT 0,
            max_attempts integer NOT NULL,
            lease_owner text,
            lease_expires_at double precision,
            not_before double precision NOT NULL DEFAULT 0,
            abort_requested boolean NOT NULL DEFAULT false,
            steps integer NOT NULL DEFAULT 0,
            result bytea,
            error bytea,
            finish_reason text,
            created_at double precision NOT NULL,
            updated_at double precision NOT NULL,
            settled_at double precision
        )""",
        # The queue: only open submissions, in admission order.
        "CREATE INDEX submissions_open ON submissions (seq) WHERE state <> 'settled'",
        "CREATE INDEX submissions_session ON submissions (session_key, seq)",
        """CREATE TABLE events (
            session_key text NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
            seq bigint NOT NULL,
            first_seq bigint NOT NULL,
            type text NOT NULL,
            payload text NOT NULL,
            submission_id text,
            PRIMARY KEY (session_key, seq)
        )""",
    ),
    # 2: context compactions (the summary itself is a marker message in the transcript).
    (
        """CREATE TABLE compactions (
            id bigserial PRIMARY KEY,
            session_key text NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
            marker_index integer NOT NULL,
            tail_start integer NOT NULL,
            messages_before integer NOT NULL,
            messages_after integer NOT NULL,
            tokens_before integer NOT NULL,
            tokens_after integer NOT NULL,
            duration_ms double precision NOT NULL,
            reason text NOT NULL,
            summarised boolean NOT NULL,
            created_at double precision NOT NULL
        )""",
        "CREATE INDEX compactions_session ON compactions (session_key, id)",
    ),
    # 3: search matches word stems ("banana" finds "bananas").
    (_stem_words,),
    # outbox: outgoing messages (chat replies, cron deliveries), see postgres_outbox.
    OUTBOX_MIGRATION,
    # approval answers: relayed between processes, the first answer to a call wins.
    (
        """CREATE TABLE IF NOT EXISTS approval_answers (
            session_key text NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
            call_id text NOT NULL,
            decision text NOT NULL,
            answered_at double precision NOT NULL,
            PRIMARY KEY (session_key, call_id)
        )""",
    ),
    # session working_dir: where a session's turns run, part of its spec.
    ("ALTER TABLE sessions ADD COLUMN IF NOT EXISTS working_dir text",),
    # cron: jobs and the run ledger (services/sessions/postgres_cron.py).
    CRON_MIGRATION,
    # checkpoints: each changing turn's snapshots (services/sessions/postgres_checkpoints.py).
    CHECKPOINTS_MIGRATION,
    # cron checks: a job's command that says whether anything is new (plugins/cron/check.py).
    ("ALTER TABLE cron_jobs ADD COLUMN IF NOT EXISTS check_command text",),
    # message vectors: search by meaning (services/sessions/postgres_vectors.py).
    VECTORS_MIGRATION,
    # images: a person's images, once per SHA-256 (services/sessions/postgres_images.py).
    IMAGES_MIGRATION,
    # budgets: cron jobs' own limits per run (`seam cron add --max-tokens`), and the day's
    # spend found by time.
    (
        "ALTER TABLE cron_jobs ADD COLUMN IF NOT EXISTS max_tokens bigint NOT NULL DEFAULT 0",
        "ALTER TABLE cron_jobs ADD COLUMN IF NOT EXISTS max_usd double precision NOT NULL"
        " DEFAULT 0",
        # The day's spend is summed before each model call where a day limit is set.
        "CREATE INDEX IF NOT EXISTS usage_created ON usage (created_at)",
    ),
    # transcript cuts: every deleted message counted on its session's row, so a kept copy
    # of a transcript knows it is stale (services/sessions/postgres_transcripts.py).
    CUTS_MIGRATION,
    # claims: a session's running and queued submissions found without reading its
    # history (services/sessions/postgres_claim.py).
    CLAIM_INDEXES,
)
SCHEMA_VERSION = len(MIGRATIONS)

# Schema names are put into SQL and connection options: keep them plain identifiers.
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def check_schema_name(schema: str) -> str:
    if not _SCHEMA_NAME.fullmatch(schema):
        raise ValueError(
            f"schema must be a lowercase identifier (letters, digits, _), got {schema!r}"
        )
    return schema


async def migrate(conn: AsyncConnection[TupleRow], schema: str) -> int:
    """Bring `schema` (created when missing) to SCHEMA_VERSION; returns the version found.

    `conn` must be in autocommit mode; every migration is its own transaction.
    """
    found: int | None = None
    while True:
        async with conn.transaction():
            # Keyed by the schema, so databases with several Seam schemas migrate each
            # independently; the lock is released when the transaction ends.
            await conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended('seam_schema:' || %s, 0))",
                (schema,),
            )
            ident = sql.Identifier(schema)
            await conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(ident))
            await conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {}.seam_schema_version (version integer NOT NULL)"
                ).format(ident)
            )
            cur = await conn.execute(
                sql.SQL("SELECT version FROM {}.seam_schema_version").format(ident)
            )
            row = await cur.fetchone()
            version = 0 if row is None else int(row[0])
            if found is None:
                found = version
            if version > SCHEMA_VERSION:
                raise RuntimeError(
                    f"PostgreSQL schema {schema!r} has Seam schema version {version}, newer "
                    f"than this Seam supports ({SCHEMA_VERSION})"
                )
            if version == SCHEMA_VERSION:
                return found
            await conn.execute(sql.SQL("SET LOCAL search_path TO {}").format(ident))
            for statement in MIGRATIONS[version]:
                if isinstance(statement, str):
                    await conn.execute(statement)
                else:
                    await statement(conn)
            if row is None:
                await conn.execute(
                    "INSERT INTO seam_schema_version (version) VALUES (%s)", (version + 1,)
                )
            else:
                await conn.execute("UPDATE seam_schema_version SET version = %s", (version + 1,))
