"""API keys for `seam serve`: create, list, revoke, and look a presented key up.

Keys live in `$SEAM_HOME/keys.json` as SHA-256 hashes: the key itself is printed once by
`seam keys create` and never stored, so a copy of the file grants nothing. The file is
re-read when it changes, so a key created or revoked while the server runs takes effect
on the next request. A key's scope (`full`, `chat`, `read`) narrows what it reaches; a key
stored before scopes existed has none and is read as `full`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from seam.apps.web.auth import SCOPES
from seam.wiring.settings import ConfigError, Settings
from seam.wiring.web_keys import DEFAULT_TENANT, keys_path

KEY_PREFIX = "seam_"


@dataclass(frozen=True)
class ApiKey:
    name: str
    tenant: str
    hash: str
    # The first characters of the key, so a person can tell keys apart in `seam keys list`.
    prefix: str
    created_at: float
    # full, chat (sessions and messages only) or read (GET routes only).
    scope: str = "full"


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class KeyStore:
    """The keys file: create, list, revoke, and look a presented key up."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self._keys: dict[str, ApiKey] = {}

    @classmethod
    def for_settings(cls, settings: Settings) -> KeyStore:
        return cls(keys_path(settings))

    def list(self) -> list[ApiKey]:
        return sorted(self._load().values(), key=lambda k: k.created_at)

    def create(self, name: str, tenant: str = DEFAULT_TENANT, scope: str = "full") -> str:
        """A new key (returned once; only its hash is written)."""
        if not name.strip() or len(name) > 100:
            raise ValueError("a key needs a name of 1 to 100 characters")
        if not tenant.strip() or '"' in tenant or "/" in tenant or tenant.startswith("."):
            raise ValueError("a tenant is a non-empty name without quotes or slashes")
        if scope not in SCOPES:
            raise ValueError(f"a key's scope is one of {', '.join(SCOPES)}, not {scope!r}")
        keys = dict(self._load())
        if name in keys:
            raise ValueError(f"a key named {name!r} exists; revoke it first")
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        keys[name] = ApiKey(name, tenant, hash_key(key), key[:9], time.time(), scope)
        self._save(keys)
        return key

    def revoke(self, name: str) -> bool:
        keys = dict(self._load())
        if keys.pop(name, None) is None:
            return False
        self._save(keys)
        return True

    def find(self, key: str) -> ApiKey | None:
        """The key presented, or None; compared in constant time."""
        digest = hash_key(key)
        found = None
        for item in self._load().values():
            if hmac.compare_digest(item.hash, digest):
                found = item
        return found

    def _load(self) -> dict[str, ApiKey]:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._stamp, self._keys = None, {}
            return self._keys
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                self._keys = {k["name"]: ApiKey(**k) for k in data.get("keys", [])}
            except (ValueError, TypeError, KeyError) as exc:
                raise ConfigError(f"{self.path}: not a valid keys file ({exc})") from None
            self._stamp = stamp
        return self._keys

    def _save(self, keys: dict[str, ApiKey]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = json.dumps({"keys": [asdict(k) for k in keys.values()]}, indent=2)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(body + "\n")
        tmp.replace(self.path)
        self._stamp = None


__all__ = ["KEY_PREFIX", "ApiKey", "KeyStore", "hash_key"]
