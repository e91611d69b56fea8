"""The files of a parked update (`inbox.py`), downloaded beside the update's row so its
tries have them: `<root>/<sha256 of the content>` (one copy of a file sent twice), and a
list per update, `<root>/updates/<sha256 of its id>.json`, naming each attachment's copy
(or why there is none).

Why here and not in the handler: a download can be slow, and the adapter hands the
gateway one update at a time, so a download inline held up every chat. A message with a
file to read is parked at once (durable, so acknowledged), its files are downloaded in a
task of its own, and the parked update is handled (`retries.py`) once they are here, in
its chat's order. The files are deleted when the update is handled or dead. A copy
missing after a restart (the process died downloading) is named as lost in the text the
model reads, as before. Only what `attachments.receive` reads is downloaded (text
documents up to its limit); the folder is capped at `MAX_KEPT_BYTES`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from seam.apps.gateway.attachments import MAX_DOCUMENT_BYTES, readable, wanted
from seam.apps.gateway.inbox import LOST
from seam.contracts.chat import Attachment, InboundMessage

log = logging.getLogger("seam.gateway")

KEPT_DIR = "gateway-files"
MAX_KEPT_BYTES = 64_000_000
DOWNLOAD_TIMEOUT = 120.0


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _failed_fetch(reason: str) -> Callable[[], Awaitable[bytes]]:
    async def fetch() -> bytes:
        raise OSError(reason)

    return fetch


class KeptFiles:
    """Downloads kept under `root` (None: nothing is kept, a retry names its files lost)."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def begin(self, sid: str, attachments: Sequence[Attachment]) -> bool:
        """Start downloading what `sid` needs, in a task of its own; whether there was
        anything to download (the update is handled once `busy` says it is done)."""
        if self.root is None or sid in self._tasks or not any(map(readable, attachments)):
            return False
        task = asyncio.ensure_future(self._keep(sid, attachments))
        self._tasks[sid] = task
        task.add_done_callback(lambda _: self._tasks.pop(sid, None))
        return True

    def busy(self, sid: str) -> bool:
        """Whether `sid`'s files are still being downloaded by this process."""
        return sid in self._tasks

    async def _keep(self, sid: str, attachments: Sequence[Attachment]) -> None:
        entries: list[dict[str, Any]] = []
        for item in attachments:
            if item.fetch is None or not wanted(item):
                entries.append({})
                continue
            try:
                async with asyncio.timeout(DOWNLOAD_TIMEOUT):
                    data = await item.fetch()
                entries.append({"sha": self._store(data)})
            except Exception as exc:
                log.warning("downloading %s failed: %s", item.name, exc)
                entries.append({"error": "download"})
        try:
            self._write_list(sid, entries)
        except OSError as exc:  # the update is handled all the same, its files named lost
            log.warning("could not keep the files of %s: %s", sid, exc)

    def _store(self, data: bytes) -> str:
        assert self.root is not None
        if len(data) > MAX_DOCUMENT_BYTES:
            raise OSError(f"{len(data)} bytes, over the limit")
        sha = _digest(data)
        path = self.root / sha
        if not path.exists():
            if self._used() + len(data) > MAX_KEPT_BYTES:
                raise OSError("the gateway's file folder is full")
            self.root.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(".part")
            partial.write_bytes(data)
            partial.replace(path)
        return sha

    def _used(self) -> int:
        assert self.root is not None
        if not self.root.is_dir():
            return 0
        return sum(p.stat().st_size for p in self.root.iterdir() if p.is_file())

    def _list_path(self, sid: str) -> Path:
        assert self.root is not None
        return self.root / "updates" / f"{_digest(sid.encode())}.json"

    def _write_list(self, sid: str, entries: list[dict[str, Any]]) -> None:
        path = self._list_path(sid)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(entries))

    def _read_list(self, sid: str) -> list[dict[str, Any]] | None:
        if self.root is None or not self._list_path(sid).is_file():
            return None
        return self._entries(self._list_path(sid))

    def restore(self, sid: str, msg: InboundMessage) -> InboundMessage:
        """`msg` (as the row kept it) with its attachments reading the kept copies; the
        text says the files were lost when the copies are not here."""
        if not msg.attachments:
            return msg
        entries = self._read_list(sid)
        if entries is None or len(entries) != len(msg.attachments):
            if not any(map(wanted, msg.attachments)):
                return msg
            # The documents are named lost; the rest still get their one-line refusal.
            others = tuple(item for item in msg.attachments if not wanted(item))
            return replace(msg, text=f"{msg.text}\n\n{LOST}".strip(), attachments=others)
        pairs = zip(msg.attachments, entries, strict=True)
        items = [self._attachment(item, entry) for item, entry in pairs]
        return replace(msg, attachments=tuple(items))

    def _attachment(self, item: Attachment, entry: dict[str, Any]) -> Attachment:
        sha = entry.get("sha")
        if not isinstance(sha, str):
            why = "not downloaded" if entry.get("error") else "not kept"
            return replace(item, fetch=_failed_fetch(why) if wanted(item) else None)
        path = (self.root or Path()) / sha

        async def fetch() -> bytes:
            return path.read_bytes()

        return replace(item, fetch=fetch)

    def forget(self, sid: str) -> None:
        """Delete `sid`'s copies (those no other parked update names) and its list."""
        entries = self._read_list(sid)
        if entries is None or self.root is None:
            return
        self._list_path(sid).unlink(missing_ok=True)
        still = {e.get("sha") for p in self._lists() for e in self._entries(p)}
        for entry in entries:
            sha = entry.get("sha")
            if isinstance(sha, str) and sha not in still:
                (self.root / sha).unlink(missing_ok=True)

    def _lists(self) -> list[Path]:
        assert self.root is not None
        folder = self.root / "updates"
        return list(folder.glob("*.json")) if folder.is_dir() else []

    @staticmethod
    def _entries(path: Path) -> list[dict[str, Any]]:
        try:
            entries = json.loads(path.read_text())
        except (OSError, ValueError):
            return []
        return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []

    async def aclose(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


__all__ = ["KEPT_DIR", "MAX_KEPT_BYTES", "KeptFiles"]
