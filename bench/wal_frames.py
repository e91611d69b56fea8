"""What a durable SQLite turn writes to the WAL: frames (pages) per turn and per commit,
by the table or index each page belongs to.

A commit in WAL mode writes every page it changed as a frame (the page, checksummed) and
a checkpoint later copies it into the database file; with `synchronous = NORMAL` neither
waits for the disk, so their cost is CPU, and it grows with the pages a turn touches,
not with its rows. This runs `durable.py`'s turn (3 tool calls + 200 text deltas) over
20 sessions on a fresh store with its checkpoints held back, so the WAL keeps every
frame, reads the frame headers the measured turns wrote and names each page's b-tree
through SQLite's `dbstat` table. A turn's three COMMITs took 0.27 ms of its 0.87 ms of
SQLite CPU in round 16 (docs/benchmarks.md): each index a turn's rows touch is a page
more in each commit that writes them.

    .venv/bin/python bench/wal_frames.py [--turns 300]
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import struct
import tempfile
from collections import Counter
from pathlib import Path

from durable import durable_turns

from seam.services.sessions import sqlite_inline
from seam.services.sessions.sqlite import SQLiteSessionStore

_WAL_HEADER = 32
_FRAME_HEADER = 24


def frames_since(wal: Path, offset: int) -> tuple[list[int], int]:
    """The page number of each frame written to `wal` after byte `offset`, and how many
    of them ended a commit (a commit's last frame holds the database's size)."""
    data = wal.read_bytes()
    page_size = struct.unpack(">I", data[8:12])[0]
    size = _FRAME_HEADER + page_size
    pages: list[int] = []
    commits = 0
    start = max(offset, _WAL_HEADER)
    for at in range(start, len(data) - size + 1, size):
        page, db_size = struct.unpack(">II", data[at : at + 8])
        pages.append(page)
        commits += db_size != 0
    return pages, commits


def _size(path: Path) -> int:
    return path.stat().st_size


def owners(path: Path) -> dict[int, str]:
    """Each page's table or index, from `dbstat` (empty: this SQLite was built without)."""
    db = sqlite3.connect(path)
    try:
        return {
            int(page): str(name) for name, page in db.execute("SELECT name, pageno FROM dbstat")
        }
    except sqlite3.OperationalError:
        return {}
    finally:
        db.close()


async def measure(turns: int) -> tuple[Counter[str], int, int]:
    """Frames by b-tree, commits and turns for `turns` turns after 150 warm-up turns."""
    # Held back: the store checkpoints every CHECKPOINT_CHANGES rows; a checkpoint starts
    # the WAL over, and the frames it held could not be read here.
    sqlite_inline.CHECKPOINT_CHANGES = 10**12
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sessions.db"
        wal = Path(f"{path}-wal")
        store = SQLiteSessionStore(str(path))
        try:
            await durable_turns(store, 100, "w")  # 150 turns with its own 50 warm-up
            offset = _size(wal)
            await durable_turns(store, turns - 50, "x")
            pages, commits = frames_since(wal, offset)
            named = owners(path)
        finally:
            await store.aclose()
    by_tree = Counter(named.get(page, "?") for page in pages)
    return by_tree, commits, turns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    args = parser.parse_args()
    by_tree, commits, turns = asyncio.run(measure(max(args.turns, 51)))
    total = sum(by_tree.values())
    print(f"WAL frames of {turns} durable SQLite turns (3 tool calls + 200 text deltas)")
    print(f"  {total / turns:6.1f} frames a turn, {commits / turns:.2f} commits a turn,"
          f" {total / max(commits, 1):.1f} frames a commit")  # fmt: skip
    for name, frames in by_tree.most_common():
        print(f"  {frames / turns:6.2f} a turn  {name}")


if __name__ == "__main__":
    main()
