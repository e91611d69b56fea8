"""Moving a session to another key, in one transaction: what a rename does, since a
session's public name is part of its durable key. Everything keyed by the session moves
with it (its transcript, usage, submissions, event log, compaction summaries, approval
answers and checkpoints), so undo, `/usage` and the event stream see one session.

The same statements serve SQLite and PostgreSQL (only the parameter mark differs). No
foreign key is deferred (PostgreSQL's are not deferrable): the new row is written first
(without its title, which is unique), the rows that point at the old key are moved to
it, the old row goes, and the title comes back.
"""

from __future__ import annotations

from dataclasses import dataclass

# Every table with a `session_key` referencing `sessions (key)`.
CHILD_TABLES = (
    "messages",
    "usage",
    "submissions",
    "events",
    "compactions",
    "approval_answers",
    "turn_checkpoints",
)
_KEPT = (
    "personality, created_at, updated_at, message_count, parent_key, ended, tenant, tools,"
    " model, ended_at, working_dir"
)


@dataclass(frozen=True, slots=True)
class RenameSql:
    """The statements of a rename, in order, with each one's parameters' order."""

    title: str  # (old,)
    copy: str  # (new, old)
    children: tuple[str, ...]  # each (new, old)
    forks: str  # (new, old): forks name their parent by key
    drop: str  # (old,)
    retitle: str  # (title, new)


def rename_sql(mark: str) -> RenameSql:
    return RenameSql(
        title=f"SELECT title FROM sessions WHERE key = {mark}",
        copy=(
            f"INSERT INTO sessions (key, title, {_KEPT})"
            f" SELECT {mark}, NULL, {_KEPT} FROM sessions WHERE key = {mark}"
        ),
        children=tuple(
            f"UPDATE {table} SET session_key = {mark} WHERE session_key = {mark}"
            for table in CHILD_TABLES
        ),
        forks=f"UPDATE sessions SET parent_key = {mark} WHERE parent_key = {mark}",
        drop=f"DELETE FROM sessions WHERE key = {mark}",
        retitle=f"UPDATE sessions SET title = {mark} WHERE key = {mark}",
    )


__all__ = ["CHILD_TABLES", "RenameSql", "rename_sql"]
