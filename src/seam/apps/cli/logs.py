"""`seam logs [--follow] [--session NAME] [--level warning]`: the structured log
(`$SEAM_HOME/logs/seam.jsonl` and its rotated files), filtered and readable.

`--follow` keeps printing lines as they are written, across rotation: when the file is
renamed away (`seam.jsonl` -> `seam.jsonl.1`) the rest of the old file is read, then the
new one from its start.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Annotated, Any

import typer

LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40, "critical": 50}
POLL_SECONDS = 0.2
# `follow_lines` reads at most this much at a time, and drops a line longer than MAX_LINE.
READ_CHUNK = 64 * 1024
MAX_LINE = 1024 * 1024


@dataclass(frozen=True)
class LogFilter:
    session: str | None = None
    level: int = 0
    # The process that wrote the line (cli, web, gateway, acp, worker), None for any.
    surface: str | None = None

    def keeps(self, line: dict[str, Any]) -> bool:
        if LEVELS.get(str(line.get("level", "")).lower(), 0) < self.level:
            return False
        if self.surface is not None and line.get("surface") != self.surface:
            return False
        return self.session is None or session_matches(line.get("session"), self.session)


def session_matches(key: object, name: str) -> bool:
    """Whether a record's session key is the session `name` (the key itself, or a key
    whose last part is the public name: `agent-session:["local","default","NAME"]`)."""
    if not isinstance(key, str):
        return False
    if key == name:
        return True
    _, _, parts = key.partition(":")
    try:
        decoded = json.loads(parts)
    except ValueError:
        return False
    return isinstance(decoded, list) and bool(decoded) and decoded[-1] == name


def parse(raw: str) -> dict[str, Any] | None:
    """One log line as a dict; None for a line that is not a JSON object (a torn write)."""
    try:
        line = json.loads(raw)
    except ValueError:
        return None
    return line if isinstance(line, dict) else None


def pretty(line: dict[str, Any]) -> str:
    """`2026-12-01 20:03:04.123 WARNING seam.loop [s / sub-1] message  trace=...`."""
    ts = line.get("ts")
    when = (
        time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) + f".{int(ts % 1 * 1000):03d}"
        if isinstance(ts, (int, float))
        else "?"
    )
    where = ""
    session = line.get("session")
    if isinstance(session, str):
        name = public_name(session)
        sub = line.get("submission")
        where = f" [{name}{' / ' + sub if isinstance(sub, str) else ''}]"
    text = f"{when} {str(line.get('level', '?')).upper():<8} {line.get('logger', '?')}{where}"
    text += f" {line.get('message', '')}"
    if isinstance(line.get("trace_id"), str):
        text += f"  trace={line['trace_id']}"
    if isinstance(line.get("exc"), str):
        text += "\n" + line["exc"]
    return text


def public_name(key: str) -> str:
    _, _, parts = key.partition(":")
    try:
        decoded = json.loads(parts)
    except ValueError:
        return key
    if isinstance(decoded, list) and decoded and isinstance(decoded[-1], str):
        return decoded[-1]
    return key


def log_files(current: Path) -> list[Path]:
    """The rotated files oldest first, then the current one."""
    rotated: list[tuple[int, Path]] = []
    for path in current.parent.glob(current.name + ".*"):
        suffix = path.name[len(current.name) + 1 :]
        if suffix.isdigit():
            rotated.append((int(suffix), path))
    return [p for _, p in sorted(rotated, reverse=True)] + ([current] if current.exists() else [])


def read_lines(paths: Iterable[Path]) -> Iterator[str]:
    for path in paths:
        try:
            with path.open(encoding="utf-8", errors="replace") as handle:
                yield from handle
        except FileNotFoundError:  # rotated away meanwhile
            continue


def _emit(raw: str, keep: LogFilter, out: IO[str]) -> None:
    line = parse(raw)
    if line is not None and keep.keeps(line):
        out.write(pretty(line) + "\n")


async def show_logs(current: Path, keep: LogFilter, *, follow: bool, out: IO[str]) -> int:
    if not follow:
        for raw in read_lines(log_files(current)):
            _emit(raw, keep, out)
        return 0
    for raw in read_lines(log_files(current)[:-1]):
        _emit(raw, keep, out)
    out.flush()
    await follow_file(current, keep, out)
    return 0


async def follow_file(current: Path, keep: LogFilter, out: IO[str]) -> None:
    """Print `current` from its start, then each line appended; reopen on rotation."""
    async for batch in follow_lines(current):
        for raw in batch:
            _emit(raw, keep, out)
        if batch:
            out.flush()


async def follow_lines(
    current: Path, *, from_end: bool = False, poll: float = POLL_SECONDS
) -> AsyncIterator[list[str]]:
    """Batches of the lines written to `current` (from its start, or only new ones with
    `from_end`), for as long as the caller iterates: `seam logs --follow` and the Control
    UI's live Logs. An empty batch means nothing new this poll (a caller's chance to send
    a heartbeat). Rotation (the file renamed away) reads the rest of the old file, then the
    new one from its start; truncation starts over. Reads are at most `READ_CHUNK` bytes
    and a line longer than `MAX_LINE` is dropped, so memory stays bounded."""
    tail = _Tail(current, from_end)
    try:
        while True:
            batch = tail.step()
            yield batch
            if not batch:
                await asyncio.sleep(poll)
    finally:  # the caller stopped (a client gone, Ctrl-C): let go of the file
        if tail.handle is not None:
            tail.handle.close()


class _Tail:
    """The state of `follow_lines`: the open file, its inode, the unfinished last line."""

    def __init__(self, current: Path, from_end: bool) -> None:
        self.current = current
        self.from_end = from_end  # only for the file there at the first look
        self.handle: IO[str] | None = None
        self.inode: int | None = None
        self.pending = ""

    def step(self) -> list[str]:
        """The complete lines readable now ([] when none)."""
        if self.handle is None and not self._open():
            return []
        assert self.handle is not None
        chunk = self.handle.read(READ_CHUNK)
        if chunk:
            return self._split(self.pending + chunk)
        try:
            now: os.stat_result | None = self.current.stat()
        except FileNotFoundError:
            now = None
        rotated = now is None or now.st_ino != self.inode
        if not rotated and now is not None and now.st_size >= self.handle.tell():
            return []
        # Rotated: what was written to the old file before it was renamed; truncated: over.
        rest = (self.pending + self.handle.read()).split("\n") if rotated else []
        self.handle.close()
        self.handle, self.pending = None, ""
        return [raw for raw in rest if raw]

    def _open(self) -> bool:
        try:
            self.handle = self.current.open(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            self.from_end = False
            return False
        self.inode = os.fstat(self.handle.fileno()).st_ino
        if self.from_end:
            self.handle.seek(0, os.SEEK_END)
            self.from_end = False
        return True

    def _split(self, text: str) -> list[str]:
        *complete, self.pending = text.split("\n")
        if len(self.pending) > MAX_LINE:  # no newline in sight: not a log line
            self.pending = ""
        return complete


def register(app: typer.Typer) -> None:
    """Add the `logs` command to the `seam` app."""

    @app.command("logs")
    def logs_command(
        follow: Annotated[
            bool, typer.Option("--follow", "-f", help="Keep printing new lines.")
        ] = False,
        session: Annotated[
            str | None, typer.Option("--session", help="Only this session's lines.")
        ] = None,
        level: Annotated[
            str, typer.Option("--level", help="The lowest level shown: debug ... critical.")
        ] = "debug",
    ) -> None:
        """The structured log ($SEAM_HOME/logs/seam.jsonl), readable."""
        from seam.apps.cli.runner import CliError, execute
        from seam.wiring.logs import json_log_file

        async def main() -> int:
            wanted = LEVELS.get(level.lower())
            if wanted is None:
                raise CliError(f"--level must be one of {', '.join(LEVELS)}, not {level!r}", 2)
            keep = LogFilter(session=session, level=wanted)
            return await show_logs(json_log_file(), keep, follow=follow, out=sys.stdout)

        execute(main())
