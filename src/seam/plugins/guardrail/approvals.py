"""`ApprovalCache`: what the person answered, remembered for a session or for good.

Keys are normalised commands (`Classification.normalized`), so `'r''m' -rf build` and
`rm -rf build` share one approval. `session` answers live in memory; `always` and
`always_deny` are kept in a JSON file (path injected) that several processes may share:
it is re-read when it changes on disk and merged before every write. A persisted deny is
checked before anything else, so a command the person always denies is refused without
asking again.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from seam.contracts.guardrail import ApprovalDecision

FORMAT_VERSION = 1


class ApprovalFileError(Exception):
    """The approvals file cannot be read or written; the message names it."""


class ApprovalCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._backup = path.with_name(path.name + ".bak")
        self._always: set[str] = set()
        self._always_deny: set[str] = set()
        self._session: dict[str, set[str]] = {}
        self._once: set[tuple[str, str]] = set()
        self._stamp: tuple[int, int] | None = None  # (mtime_ns, size) when last read
        self._refresh()

    def is_denied(self, command: str) -> bool:
        """Whether the person chose to always deny this command."""
        self._refresh()
        return command in self._always_deny

    def is_approved(self, session_key: str, command: str) -> bool:
        """Whether a standing approval covers the command (nothing is used up)."""
        self._refresh()
        if command in self._always_deny:
            return False
        return (
            command in self._always
            or command in self._session.get(session_key, ())
            or (session_key, command) in self._once
        )

    def consume(self, session_key: str, command: str) -> ApprovalDecision | None:
        """The remembered answer for this call, using up a `once` grant; a persisted
        deny wins over any approval. None: nothing remembered, ask."""
        self._refresh()
        if command in self._always_deny:
            return "always_deny"
        if (session_key, command) in self._once:
            self._once.discard((session_key, command))
            return "once"
        if command in self._session.get(session_key, ()):
            return "session"
        if command in self._always:
            return "always"
        return None

    def cache(self, session_key: str, command: str, decision: ApprovalDecision) -> None:
        """Remember an answer. `once` is a single-use grant for the next call of the
        command in the session (for surfaces that ask ahead of the call); `deny` withdraws
        such a grant; `always` and `always_deny` are written to the file."""
        if decision == "once":
            self._once.add((session_key, command))
        elif decision == "session":
            self._session.setdefault(session_key, set()).add(command)
        elif decision == "deny":
            self._once.discard((session_key, command))
        elif decision == "always":
            self._persist(allow=command)
        elif decision == "always_deny":
            for granted in self._session.values():
                granted.discard(command)
            self._once = {grant for grant in self._once if grant[1] != command}
            self._persist(deny=command)
        else:
            raise ValueError(f"unknown approval decision {decision!r}")

    def remembered(self) -> dict[str, list[str]]:
        """The persisted lists as the file has them now: `always` and `always_deny`."""
        self._refresh()
        return {"always": sorted(self._always), "always_deny": sorted(self._always_deny)}

    def forget(self, kind: str, command: str) -> bool:
        """Remove `command` from the persisted `kind` list ("always" or "always_deny"),
        merged with what other processes wrote; False when it was not there. Every gate
        sharing the file sees the removal on its next check (it re-reads a changed file)."""
        self._refresh()
        kept = {"always": self._always, "always_deny": self._always_deny}.get(kind)
        if kept is None:
            raise ValueError(f"kind must be always or always_deny, not {kind!r}")
        if command not in kept:
            return False
        kept.discard(command)
        self._save()
        return True

    def forget_session(self, session_key: str) -> None:
        self._session.pop(session_key, None)
        self._once = {grant for grant in self._once if grant[0] != session_key}

    def _persist(self, *, allow: str | None = None, deny: str | None = None) -> None:
        self._refresh()  # merge what another process wrote; a corrupt file stops here
        if allow is not None:
            self._always.add(allow)
            self._always_deny.discard(allow)
        if deny is not None:
            self._always_deny.add(deny)
            self._always.discard(deny)
        self._save()

    def _save(self) -> None:
        """Write the persisted lists as this cache holds them."""
        data = {
            "version": FORMAT_VERSION,
            "always": sorted(self._always),
            "always_deny": sorted(self._always_deny),
        }
        self._write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    def _write(self, text: str) -> None:
        """Atomic: a temp file beside it, then os.replace; the previous version is kept
        as `<name>.bak`."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        except OSError as exc:
            raise ApprovalFileError(f"{self.path}: cannot write: {exc.strerror}") from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            if self.path.exists():
                shutil.copy2(self.path, self._backup)
            Path(temp).replace(self.path)
        except OSError as exc:
            Path(temp).unlink(missing_ok=True)
            raise ApprovalFileError(f"{self.path}: cannot write: {exc.strerror}") from None
        stat = self.path.stat()
        self._stamp = (stat.st_mtime_ns, stat.st_size)

    def _refresh(self) -> None:
        """Re-read the file when it changed on disk (one stat per call)."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self._always.clear()
            self._always_deny.clear()
            self._stamp = None
            return
        except OSError as exc:
            raise ApprovalFileError(f"{self.path}: cannot read: {exc.strerror}") from None
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp == self._stamp:
            return
        self._always, self._always_deny = self._load()
        self._stamp = stamp

    def _load(self) -> tuple[set[str], set[str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ApprovalFileError(f"{self.path}: cannot read: {exc.strerror}") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise self._corrupt(f"not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise self._corrupt("expected a JSON object")
        if data.get("version") != FORMAT_VERSION:
            raise self._corrupt(f"unknown version {data.get('version')!r}")
        unknown = set(data) - {"version", "always", "always_deny"}
        if unknown:
            raise self._corrupt(f"unknown keys {sorted(unknown)}")
        lists = []
        for key in ("always", "always_deny"):
            value = data.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise self._corrupt(f"{key!r} must be a list of command strings")
            lists.append(set(value))
        return lists[0], lists[1]

    def _corrupt(self, problem: str) -> ApprovalFileError:
        return ApprovalFileError(
            f"{self.path}: {problem}; it was left untouched: fix it, or move it away to start "
            f"over (the previous version, if any, is {self._backup.name})"
        )
