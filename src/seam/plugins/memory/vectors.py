"""Entry vectors kept beside the memory files, so an entry is embedded once.

A small SQLite file next to MEMORY.md and USER.md holds one row per (entry text's
SHA-256, embedder name): an unchanged entry is never embedded again, an edited one has
a new digest and is embedded on the next search, and a vector of another model (another
`Embedder.name`) is never compared with this one's. Keyed by content, not position, the
file survives hand edits, reordering and the memory being rewritten by another process.

The file is a cache: when it cannot be opened or written (a read-only home), searches
still work from the vectors computed in this process.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path

VECTORS_FILE = ".vectors.sqlite3"
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors ("
    " digest TEXT NOT NULL, embedder TEXT NOT NULL, vector BLOB NOT NULL,"
    " PRIMARY KEY (digest, embedder)) WITHOUT ROWID"
)
_BUSY_SECONDS = 5.0


def digest(text: str) -> str:
    """The key of an entry's vector: the SHA-256 of its text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class VectorFile:
    """The vectors of one memory folder (`folder/.vectors.sqlite3`)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / VECTORS_FILE

    def load(self, embedder: str) -> dict[str, bytes]:
        """Every stored vector of `embedder`, by digest ({} when there is no file)."""
        if not self.path.exists():
            return {}
        try:
            with self._open() as db:
                rows = db.execute(
                    "SELECT digest, vector FROM vectors WHERE embedder = ?", (embedder,)
                ).fetchall()
        except sqlite3.Error:
            return {}
        return {str(key): bytes(vector) for key, vector in rows}

    def store(self, embedder: str, vectors: Mapping[str, bytes], keep: Collection[str]) -> bool:
        """Add `vectors` and drop this embedder's rows whose digest is not in `keep`
        (entries edited or removed since); False when the file cannot be written."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # As private as the memory files: vectors say something of what entries hold.
            self.path.touch(mode=0o600, exist_ok=True)
            with self._open() as db, db:
                db.executemany(
                    "INSERT OR REPLACE INTO vectors (digest, embedder, vector) VALUES (?, ?, ?)",
                    [(key, embedder, vector) for key, vector in vectors.items()],
                )
                stored = db.execute(
                    "SELECT digest FROM vectors WHERE embedder = ?", (embedder,)
                ).fetchall()
                gone = [(row[0], embedder) for row in stored if row[0] not in keep]
                db.executemany("DELETE FROM vectors WHERE digest = ? AND embedder = ?", gone)
        except (sqlite3.Error, OSError):
            return False
        return True

    @contextlib.contextmanager
    def _open(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=_BUSY_SECONDS)
        try:
            db.execute(_SCHEMA)
            yield db
        finally:
            db.close()


__all__ = ["VECTORS_FILE", "VectorFile", "digest"]
