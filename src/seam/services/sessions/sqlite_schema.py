"""The session database's schema on SQLite: the migrations, oldest first.

Apart from the store because it is data, not behaviour: a long list of statements that
only grows (append new migrations, never edit a shipped one), read by `SQLiteSessionStore`
when it opens a file and by the tests that build old-version fixtures.
"""

from __future__ import annotations

from seam.services.sessions.checkpoint_rows import CHECKPOINTS_MIGRATION
from seam.services.sessions.sqlite_cron import CRON_MIGRATION
from seam.services.sessions.sqlite_images import IMAGES_MIGRATION
from seam.services.sessions.sqlite_outbox import OUTBOX_MIGRATION
from seam.services.sessions.sqlite_search_index import SEARCH_INDEX_MIGRATION
from seam.services.sessions.sqlite_transcripts import CUTS_MIGRATION


def _fts_table(tokenize: str) -> str:
    """The search index over `searchable_messages` (its external content), as first
    shipped and as rebuilt with another tokenizer: the same text but for `tokenize`."""
    return f"""CREATE VIRTUAL TABLE messages_fts USING fts5 (
            content,
            content = 'searchable_messages',
            content_rowid = 'id',
            tokenize = '{tokenize}'
        )"""


# Keep the search index in step with the messages it covers (created with the index, and
# again whenever it is rebuilt).
_FTS_TRIGGERS = (
    """CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
            WHEN new.role IN ('user', 'assistant') AND new.content <> ''
            BEGIN
                INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
            END""",
    """CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
            WHEN old.role IN ('user', 'assistant') AND old.content <> ''
            BEGIN
                INSERT INTO messages_fts (messages_fts, rowid, content)
                VALUES ('delete', old.id, old.content);
            END""",
)

# Each migration is a list of statements run in one transaction; PRAGMA user_version
# counts how many have been applied. Append new ones, never edit a shipped one.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE sessions (
            key TEXT PRIMARY KEY,
            title TEXT UNIQUE,
            personality TEXT,
            parent_key TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            ended INTEGER NOT NULL DEFAULT 0,
            message_count INTEGER NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX sessions_recent ON sessions (updated_at DESC, key)",
        # Append-only: rows are inserted and deleted, never updated, so the search index
        # needs no UPDATE trigger.
        """CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            session_key TEXT NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            role TEXT NOT NULL,
            content TEXT NOT NULL,
            tool_calls TEXT,
            tool_call_id TEXT,
            name TEXT,
            interrupted INTEGER NOT NULL DEFAULT 0,
            UNIQUE (session_key, idx)
        )""",
        # The rows the search index covers; FTS5 reads it as its external content table.
        """CREATE VIEW searchable_messages AS
            SELECT id, content FROM messages
            WHERE role IN ('user', 'assistant') AND content <> ''""",
        _fts_table("unicode61 remove_diacritics 2"),
        *_FTS_TRIGGERS,
    ),
    # 2: per-call usage and cost.
    (
        """CREATE TABLE usage (
            id INTEGER PRIMARY KEY,
            session_key TEXT NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
            turn_id TEXT NOT NULL,
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            input_tokens INTEGER NOT NULL,
            output_tokens INTEGER NOT NULL,
            cache_read_tokens INTEGER NOT NULL,
            cache_write_tokens INTEGER NOT NULL,
            reasoning_tokens INTEGER NOT NULL,
            cost_usd REAL,
            created_at REAL NOT NULL
        )""",
        "CREATE INDEX usage_session ON usage (session_key)",
    ),
    # 3: durable execution: session specs, submissions, tagged transcript rows, events.
    (
        "ALTER TABLE sessions ADD COLUMN tenant TEXT",
        "ALTER TABLE sessions ADD COLUMN tools TEXT",
        "ALTER TABLE sessions ADD COLUMN model TEXT",
        "ALTER TABLE messages ADD COLUMN submission_id TEXT",
        "CREATE INDEX messages_submission ON messages (submission_id)"
        " WHERE submission_id IS NOT NULL",
        """CREATE TABLE submissions (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            session_key TEXT NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
            input TEXT NOT NULL,
            personality TEXT,
            state TEXT NOT NULL,
            outcome TEXT,
            attempts INTEGER NOT NULL DEFAULT 0,
            max_attempts INTEGER NOT NULL,
            lease_owner TEXT,
            lease_expires_at REAL,
            not_before REAL NOT NULL DEFAULT 0,
            abort_requested INTEGER NOT NULL DEFAULT 0,
            steps INTEGER NOT NULL DEFAULT 0,
            result TEXT,
            error TEXT,
            finish_reason TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            settled_at REAL
        )""",
        "CREATE INDEX submissions_open ON submissions (state, seq) WHERE state <> 'settled'",
        "CREATE INDEX submissions_session ON submissions (session_key, seq)",
        """CREATE TABLE events (
            session_key TEXT NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            first_seq INTEGER NOT NULL,
            type TEXT NOT NULL,
            payload TEXT NOT NULL,
            submission_id TEXT,
            PRIMARY KEY (session_key, seq)
        ) WITHOUT ROWID""",
    ),
    # 4: when a session ended (prune goes by it). Sessions ended before it was recorded
    # count as ended at their last activity.
    (
        "ALTER TABLE sessions ADD COLUMN ended_at REAL",
        "UPDATE sessions SET ended_at = updated_at WHERE ended <> 0",
        "CREATE INDEX sessions_ended ON sessions (ended_at) WHERE ended <> 0",
    ),
    # 5: context compactions (the summary itself is a marker message in the transcript).
    (
        """CREATE TABLE compactions (
            id INTEGER PRIMARY KEY,
            session_key TEXT NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
            marker_index INTEGER NOT NULL,
            tail_start INTEGER NOT NULL,
            messages_before INTEGER NOT NULL,
            messages_after INTEGER NOT NULL,
            tokens_before INTEGER NOT NULL,
            tokens_after INTEGER NOT NULL,
            duration_ms REAL NOT NULL,
            reason TEXT NOT NULL,
            summarised INTEGER NOT NULL,
            created_at REAL NOT NULL
        )""",
        "CREATE INDEX compactions_session ON compactions (session_key, id)",
    ),
    # 6: search matches word stems ("banana" finds "bananas"): the index is rebuilt with
    # the porter tokenizer from the messages themselves (nothing else is lost or moved).
    (
        "DROP TRIGGER messages_fts_insert",
        "DROP TRIGGER messages_fts_delete",
        "DROP TABLE messages_fts",
        _fts_table("porter unicode61 remove_diacritics 2"),
        *_FTS_TRIGGERS,
        "INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')",
    ),
    # outbox: outgoing messages (chat replies, cron deliveries), see sqlite_outbox.
    OUTBOX_MIGRATION,
    # approval answers: relayed between processes, the first answer to a call wins.
    (
        """CREATE TABLE IF NOT EXISTS approval_answers (
            session_key TEXT NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
            call_id TEXT NOT NULL,
            decision TEXT NOT NULL,
            answered_at REAL NOT NULL,
            PRIMARY KEY (session_key, call_id)
        ) WITHOUT ROWID""",
    ),
    # session working_dir: where a session's turns run, part of its spec.
    ("ALTER TABLE sessions ADD COLUMN working_dir TEXT",),
    # cron: jobs and the run ledger (services/sessions/sqlite_cron.py).
    CRON_MIGRATION,
    # checkpoints: each changing turn's snapshots (services/sessions/sqlite_checkpoints.py).
    CHECKPOINTS_MIGRATION,
    # cron checks: a job's command that says whether anything is new (plugins/cron/check.py).
    ("ALTER TABLE cron_jobs ADD COLUMN check_command TEXT",),
    # message vectors: search by meaning (services/sessions/sqlite_vectors.py). The
    # migration of a store upgraded in place adds the table; the indexer fills it.
    (
        """CREATE TABLE IF NOT EXISTS message_vectors (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            message_id INTEGER NOT NULL UNIQUE REFERENCES messages (id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            vector BLOB NOT NULL
        )""",
        # What the indexer walks to find messages with no vector, without their content.
        "CREATE INDEX IF NOT EXISTS messages_searchable ON messages (id)"
        " WHERE role IN ('user', 'assistant') AND content <> ''",
    ),
    # images: a person's images, once per SHA-256 (services/sessions/sqlite_images.py).
    IMAGES_MIGRATION,
    # budgets: cron jobs' own limits per run (`seam cron add --max-tokens`), and the day's
    # spend found by time.
    (
        "ALTER TABLE cron_jobs ADD COLUMN max_tokens INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE cron_jobs ADD COLUMN max_usd REAL NOT NULL DEFAULT 0",
        # The day's spend is summed before each model call where a day limit is set.
        "CREATE INDEX IF NOT EXISTS usage_created ON usage (created_at)",
    ),
    # title lineages: a new session's "base #N" found with one seek (sqlite.NEXT_TITLE_SQL),
    # not a scan of every "base #..." (a thousand sessions first titled "hi").
    (
        "CREATE INDEX IF NOT EXISTS sessions_lineage"
        " ON sessions (rtrim(title, '0123456789'), length(title), title)"
        " WHERE title GLOB '* #[1-9]*'",
    ),
    # transcript cuts: every deleted message counted on its session's row, so a kept copy
    # of a transcript knows it is stale (services/sessions/sqlite_transcripts.py).
    CUTS_MIGRATION,
    # open submissions read alone: a claim walks the open rows in order (its scan read
    # every submission ever made before reaching them), and an admission's look at its
    # session and a claim's look for a running one seek the session's open rows, not every
    # submission it ever had (a long-lived chat has thousands). Queries on open rows say
    # `state <> 'settled'` in so many words, the condition SQLite matches these indexes by.
    (
        "DROP INDEX IF EXISTS submissions_open",
        "CREATE INDEX submissions_open ON submissions (seq) WHERE state <> 'settled'",
        "CREATE INDEX IF NOT EXISTS submissions_session_open ON submissions"
        " (session_key, seq) WHERE state <> 'settled'",
    ),
    # search index kept up in batches (services/sessions/sqlite_search_index.py). A later
    # rebuild of the index must create its LATER_TRIGGERS, not _FTS_TRIGGERS.
    SEARCH_INDEX_MIGRATION,
    # the event log in the order it is written: a WITHOUT ROWID table kept its rows in
    # (session, seq) order, so each turn's records landed in the middle of the tree, split
    # a page there and left pages half empty (about 11 pages written per turn for 11 rows
    # across 20 sessions). A rowid table appends them; the index keeps the (session, seq)
    # order that reads and the cascade from sessions use.
    (
        """CREATE TABLE events_appended (
            id INTEGER PRIMARY KEY,
            session_key TEXT NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            first_seq INTEGER NOT NULL,
            type TEXT NOT NULL,
            payload TEXT NOT NULL,
            submission_id TEXT
        )""",
        "INSERT INTO events_appended (session_key, seq, first_seq, type, payload, submission_id)"
        " SELECT session_key, seq, first_seq, type, payload, submission_id FROM events"
        " ORDER BY session_key, seq",
        "DROP TABLE events",
        "ALTER TABLE events_appended RENAME TO events",
        "CREATE UNIQUE INDEX events_seq ON events (session_key, seq)",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)
