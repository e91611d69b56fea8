"""Pairing: how someone outside a platform's `allow` list comes to talk to the agent.

A stranger who writes to the bot gets an 8-character code (valid one hour; asking again
within that hour gives the same code). The owner approves it with `seam pairing approve
CODE`; from then on that user is known on that platform and gets sessions of their own
(one per chat, as everyone does), as a tenant of their own, never the owner (`tenants.py`).
`seam pairing revoke USER` ends it; the Control UI's Channels section can also deny a
waiting code (`deny`).

Guessing is bounded: whoever enters codes (`by`: the CLI's user, a chat user) is locked
out for 15 minutes after 5 wrong codes within that time, so a 32^8 code space cannot be
searched through the approval path.

The file is `$SEAM_HOME/pairing.json`, mode 0600, inside the home that `wiring/reach.py`
denies to every tool and the sandbox masks, so the agent can neither read the codes nor
approve itself. Several processes share it (the gateway writes codes, the CLI approves
them): every change is a read-modify-write under an exclusive `flock`, written atomically.

Strangers cannot grow it without bound: each platform keeps at most `max_pending` codes
waiting (`[gateway] max_pending_pairings`); a new one past that drops the oldest, with a
warning in the log. Names are stored with control characters stripped (`clean_name`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from seam.contracts.names import clean_name
from seam.wiring.gateway_settings import DEFAULT_MAX_PENDING_PAIRINGS, gateway_section
from seam.wiring.settings import ConfigError, Settings

log = logging.getLogger(__name__)

PAIRING_FILE = "pairing.json"
CODE_LENGTH = 8
# No 0/O, 1/I/L: a code read off a phone is typed back without doubt.
ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_TTL = 3600.0
MAX_WRONG = 5
LOCKOUT = 15 * 60.0


class PairingError(ValueError):
    """A code that cannot be approved (unknown, expired) or a locked-out approver; the
    message says which, in one line."""


@dataclass(frozen=True, slots=True)
class PairingRequest:
    code: str
    platform: str
    user_id: str
    user_name: str
    chat: str
    created_at: float
    expires_at: float


@dataclass(frozen=True, slots=True)
class PairedUser:
    platform: str
    user_id: str
    user_name: str
    approved_at: float

    @property
    def ref(self) -> str:
        return f"{self.platform}:{self.user_id}"


class PairingStore:
    """The pairing file: codes waiting for approval, approved users, wrong-code counts."""

    def __init__(
        self,
        path: Path,
        *,
        clock: Callable[[], float] = time.time,
        max_pending: int = DEFAULT_MAX_PENDING_PAIRINGS,
    ) -> None:
        self.path = path
        self._clock = clock
        self.max_pending = max_pending

    @classmethod
    def for_settings(cls, settings: Settings) -> PairingStore:
        cap = gateway_section(settings).max_pending_pairings
        return cls(settings.home / PAIRING_FILE, max_pending=cap)

    # What the gateway asks

    def is_paired(self, platform: str, user_id: str) -> bool:
        return f"{platform}:{user_id}" in self._read().get("approved", {})

    def request(self, platform: str, user_id: str, user_name: str, chat: str) -> PairingRequest:
        """The user's code: the one still valid, else a new one."""
        with self._changing() as data:
            now = self._clock()
            pending: dict[str, Any] = data.setdefault("pending", {})
            for item in pending.values():
                mine = (item["platform"], item["user_id"]) == (platform, user_id)
                if mine and item["expires_at"] > now:
                    return PairingRequest(**item)
            code = self._new_code(pending)
            name = clean_name(user_name)
            request = PairingRequest(code, platform, user_id, name, chat, now, now + CODE_TTL)
            pending[code] = asdict(request)
            self._drop_oldest(pending, platform)
            return request

    def _drop_oldest(self, pending: dict[str, Any], platform: str) -> None:
        """Keep `platform` to `max_pending` codes waiting, dropping the oldest (logged)."""
        mine = sorted(
            (item["created_at"], code)
            for code, item in pending.items()
            if item["platform"] == platform
        )
        for _, code in mine[: max(0, len(mine) - self.max_pending)]:
            gone = pending.pop(code)
            log.warning(
                "pairing: over %d codes waiting on %s, dropped the oldest (%s:%s, %s)",
                self.max_pending,
                platform,
                platform,
                clean_name(str(gone["user_id"])),
                clean_name(str(gone["user_name"])),
            )

    # What the owner does

    def pending(self) -> list[PairingRequest]:
        now = self._clock()
        items = [PairingRequest(**item) for item in self._read().get("pending", {}).values()]
        return sorted((i for i in items if i.expires_at > now), key=lambda i: i.created_at)

    def approved(self) -> list[PairedUser]:
        items = [PairedUser(**item) for item in self._read().get("approved", {}).values()]
        return sorted(items, key=lambda i: i.approved_at)

    def approve(self, code: str, *, by: str = "cli") -> PairedUser:
        """Approve the user `code` was given to; `PairingError` when it is not a valid
        code or `by` has entered too many wrong ones."""
        code = code.strip().upper()
        with self._changing() as data:
            now = self._clock()
            wrong: dict[str, list[float]] = data.setdefault("wrong", {})
            recent = [t for t in wrong.get(by, []) if t > now - LOCKOUT]
            if len(recent) >= MAX_WRONG:
                wait = int(recent[0] + LOCKOUT - now) // 60 + 1
                raise PairingError(f"too many wrong codes: try again in {wait} min")
            pending: dict[str, Any] = data.setdefault("pending", {})
            item = pending.get(code)
            if item is None or item["expires_at"] <= now:
                recent.append(now)
                wrong[by] = recent
                pending.pop(code, None)
                left = MAX_WRONG - len(recent)
                what = "expired" if item is not None else "not a pairing code waiting"
                raise PairingError(
                    f"{code!r} is {what} ({left} more wrong code(s) before a 15 min lockout)"
                )
            del pending[code]
            wrong.pop(by, None)
            user = PairedUser(item["platform"], item["user_id"], item["user_name"], now)
            data.setdefault("approved", {})[user.ref] = asdict(user)
            return user

    def deny(self, code: str) -> PairingRequest | None:
        """Drop the waiting `code` without pairing anyone (the person may ask again);
        the request it was, or None when no such code waits."""
        code = code.strip().upper()
        with self._changing() as data:
            item = data.setdefault("pending", {}).pop(code, None)
            return PairingRequest(**item) if item is not None else None

    def revoke(self, user: str) -> list[PairedUser]:
        """Un-pair `user` ("telegram:42", or "42" on every platform); who was removed."""
        with self._changing() as data:
            approved: dict[str, Any] = data.setdefault("approved", {})
            gone = [ref for ref, item in approved.items() if user in (ref, item["user_id"])]
            return [PairedUser(**approved.pop(ref)) for ref in gone]

    # The file

    def _new_code(self, taken: dict[str, Any]) -> str:
        while True:
            code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
            if code not in taken:
                return code

    def _read(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        try:
            data = json.loads(text) if text.strip() else {}
        except ValueError as exc:
            raise ConfigError(f"{self.path}: not a valid pairing file ({exc})") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{self.path}: not a valid pairing file")
        return data

    @contextlib.contextmanager
    def _changing(self) -> Iterator[dict[str, Any]]:
        """The file's data, written back atomically if the block ends without an error
        (an error raised after a change, a wrong code, still records the change)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock_fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            data = self._read()
            now = self._clock()
            pending = data.get("pending", {})
            for code in [c for c, i in pending.items() if i["expires_at"] <= now - CODE_TTL]:
                del pending[code]  # expired for an hour: forget it
            try:
                yield data
            finally:
                self._write(data)
        finally:
            os.close(lock_fd)

    def _write(self, data: dict[str, Any]) -> None:
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            # Compact: json's C encoder (not its indenting Python one) keeps a flood of
            # strangers from costing the gateway's loop milliseconds per message.
            f.write(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n")
        tmp.replace(self.path)


__all__ = [
    "CODE_LENGTH",
    "CODE_TTL",
    "LOCKOUT",
    "MAX_WRONG",
    "PAIRING_FILE",
    "PairedUser",
    "PairingError",
    "PairingRequest",
    "PairingStore",
]
