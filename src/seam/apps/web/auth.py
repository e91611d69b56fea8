"""Who is calling: an API key (`Authorization: Bearer <key>`) or the page's session cookie.

The cookie is `<nonce>.<HMAC of the nonce>` under a secret kept in `$SEAM_HOME`, so every
`seam serve` process of one home accepts it; it is set by the login token that `seam serve`
prints (as Jupyter does), and belongs to the default tenant, the machine's owner. Its name
carries the server's port (`cookie_name`): browsers keep cookies per host, not per port, so
two servers on one host (or another local app's own `seam_session`) would otherwise
overwrite or be handed each other's cookie. It is `HttpOnly` and `SameSite=Strict`, so no
script and no other site's page can use it. The login token works once: a copied or
logged link is worthless after the owner opened it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

COOKIE = "seam_session"
SCOPES = ("full", "chat", "read")
Clock = Callable[[], float]
# Callers a rate limiter remembers at most (the least recently seen are forgotten first).
MAX_CALLERS = 100_000


def cookie_name(port: int | None) -> str:
    """The page's cookie for the server on `port` (`seam_session_8420`)."""
    return f"{COOKIE}_{port or 0}"


@dataclass(frozen=True)
class Principal:
    tenant: str
    # What rate limits count against: a key's name, or the cookie's nonce.
    id: str
    # What the caller may reach: full, chat (sessions and messages) or read (GET routes).
    scope: str = "full"
    # The machine's owner (the default tenant): only it changes how the agent behaves.
    owner: bool = False


class FoundKey(Protocol):
    """What the authenticator reads of a key it found (read-only, so a frozen record fits)."""

    @property
    def name(self) -> str: ...

    @property
    def tenant(self) -> str: ...

    @property
    def scope(self) -> str: ...


class Keys(Protocol):
    def find(self, key: str) -> FoundKey | None: ...


class Authenticator:
    def __init__(self, keys: Keys | None, secret: bytes, login_token: str, tenant: str) -> None:
        self._keys = keys
        self._secret = secret
        self.login_token = login_token
        self._unused = {login_token}
        self._tenant = tenant

    def from_headers(self, authorization: str | None, cookie: str | None) -> Principal | None:
        if authorization:
            scheme, _, value = authorization.partition(" ")
            if scheme.lower() == "bearer" and value.strip() and self._keys is not None:
                found = self._keys.find(value.strip())
                if found is not None:
                    owner = found.tenant == self._tenant
                    return Principal(found.tenant, f"key:{found.name}", found.scope, owner)
            return None
        if cookie:
            nonce, _, mac = cookie.partition(".")
            if nonce and hmac.compare_digest(mac, self._sign(nonce)):
                return Principal(self._tenant, f"cookie:{nonce}", owner=True)
        return None

    def login(self, token: str) -> str | None:
        """A new cookie value for an unused login token (which is then spent), else None."""
        match = [t for t in self._unused if hmac.compare_digest(token.encode(), t.encode())]
        if not match:
            return None
        self._unused.discard(match[0])
        nonce = secrets.token_urlsafe(16)
        return f"{nonce}.{self._sign(nonce)}"

    def _sign(self, nonce: str) -> str:
        return hmac.new(self._secret, nonce.encode(), hashlib.sha256).hexdigest()


class RateLimiter:
    """A token bucket per principal: `per_minute` requests a minute, as a burst too.

    It forgets callers, so distinct keys, tenants or addresses cannot grow it without end:
    a bucket idle for a full refill time (a minute) is full again, the same as no bucket,
    and is dropped; and past `max_callers` buckets the least recently seen is dropped
    (that caller starts again with a full bucket: lenient, never stricter). The buckets are
    kept in the order they were last used, so both are a look at the oldest, O(1) a call.
    """

    def __init__(
        self, per_minute: int, clock: Clock = time.monotonic, *, max_callers: int = MAX_CALLERS
    ) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.max_callers = max_callers
        self._clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def __len__(self) -> int:
        """How many callers it remembers."""
        return len(self._buckets)

    def allow(self, who: str) -> float:
        """0 when allowed, else the seconds to wait before the next request."""
        now = self._clock()
        tokens, at = self._buckets.pop(who, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - at) * self.rate)
        allowed = tokens >= 1.0
        self._buckets[who] = (tokens - 1.0 if allowed else tokens, now)
        self._forget(now)
        return 0.0 if allowed else (1.0 - tokens) / self.rate

    def _forget(self, now: float) -> None:
        """Drop buckets idle long enough to be full, then the oldest past the cap."""
        buckets = self._buckets
        refill = self.capacity / self.rate  # seconds from empty to full
        while buckets:
            _, at = next(iter(buckets.values()))
            if now - at < refill:
                break
            buckets.popitem(last=False)
        while len(buckets) > self.max_callers:
            buckets.popitem(last=False)
