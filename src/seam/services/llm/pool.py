"""A credential pool: several API keys for one provider, behind one `ModelProvider`.

One key hits its rate limit, runs out of credit or gets revoked long before a provider
goes down, so the pool spreads requests over keys and steps around the ones that fail.
It wraps one inner provider per key, built by `make_provider(key)`. Build those with
`max_retries=0`: the pool decides every retry, because whether to retry the same key,
rotate to another or give up depends on the error kind, which the inner provider's own
retry loop cannot know about. Inner retries would also multiply with the pool's.

The rules, applied only while the failed attempt has produced nothing (a retry after
output would repeat text the user has already seen):

- `rate_limited`: retry the same key once after its `Retry-After` (a burst limit often
  clears within seconds), then put it on cooldown for `Retry-After` (or
  `rate_limit_cooldown`) and rotate. A `Retry-After` longer than the retry policy's cap
  rotates at once: waiting the capped time would only earn another 429.
- `auth`, `billing`: rotate at once; the key cools for `auth_cooldown` (a revoked key or
  an empty balance does not recover in seconds).
- `retryable` (5xx, timeouts, dropped streams): jittered backoff on the same key up to
  the retry policy's bound, then rotate without a cooldown (the trouble is the server's,
  not the key's).
- a stalled server (`retry.Stalled`) is raised at once too: another key would wait on
  the same server.
- anything else (`context_overflow`, `refused`, `fatal`) is raised at once: no key helps.

Each retry of a key is told to `on_retry` before its back-off, so a person waiting sees it.

Keys never appear in logs, errors or the state file: a key is shown as a fingerprint
(`sk-…abcd`) and stored under its SHA-256 digest. The state file is for one pool only;
keys it does not know are dropped from it on the next save.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import os
import tempfile
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from seam.contracts.model import (
    ErrorKind,
    ModelCapabilities,
    ModelChunk,
    ModelError,
    ModelProvider,
    ModelRequest,
    OnRetry,
    RetryNotice,
)
from seam.services.llm.relay import Relay
from seam.services.llm.retry import RetryPolicy, Sleep, Stalled, retry_reason

Strategy = Literal["fill_first", "round_robin", "least_used"]

_log = logging.getLogger(__name__)
_STRATEGIES: frozenset[str] = frozenset(get_args(Strategy))
_ERROR_KINDS: frozenset[str] = frozenset(get_args(ErrorKind))
_ROTATE_ON: frozenset[str] = frozenset({"rate_limited", "auth", "billing", "retryable"})
_STATE_VERSION = 1
# Retries on one key multiply by the number of keys, so the default bound is lower than a
# lone provider's.
_DEFAULT_RETRY = RetryPolicy(max_retries=2)


@dataclass(frozen=True, slots=True)
class KeyState:
    """One key as diagnostics (`seam models`) show it; never the key itself."""

    fingerprint: str
    uses: int
    failures: int
    # Epoch seconds (the pool's clock); the key is skipped until then. 0.0: never cooled.
    cooldown_until: float
    last_error: ErrorKind | None


def fingerprint(key: str) -> str:
    """A short, recognisable label for a key (`sk-…abcd`) that does not give it away."""
    if len(key) >= 12:
        return f"{key[:3]}…{key[-4:]}"
    return f"…{key[-2:]}"


class _Key:
    """A key's mutable bookkeeping; only `secret` ever holds the key."""

    __slots__ = (
        "cooldown_until",
        "digest",
        "failures",
        "index",
        "label",
        "last_error",
        "provider",
        "secret",
        "uses",
    )

    def __init__(self, index: int, secret: str) -> None:
        self.index = index
        self.secret = secret
        self.label = fingerprint(secret)
        self.digest = hashlib.sha256(secret.encode()).hexdigest()
        self.uses = 0
        self.failures = 0
        self.cooldown_until = 0.0
        self.last_error: ErrorKind | None = None
        self.provider: ModelProvider | None = None


class PooledProvider:
    """Several keys for one provider, rotated by `strategy` and by the rules above.

    `fill_first` uses the first available key until it fails (cheapest on per-key
    quotas), `round_robin` moves to the next key on every request, `least_used` picks
    the key with the fewest requests so far (counted across restarts via `state_path`).
    """

    def __init__(
        self,
        keys: Sequence[str],
        make_provider: Callable[[str], ModelProvider],
        *,
        strategy: Strategy = "fill_first",
        state_path: str | os.PathLike[str] | None = None,
        rate_limit_cooldown: float = 60.0,
        auth_cooldown: float = 24 * 3600,
        retry: RetryPolicy = _DEFAULT_RETRY,
        clock: Callable[[], float] = time.time,
        sleep: Sleep = asyncio.sleep,
        name: str | None = None,
        on_retry: OnRetry | None = None,
    ) -> None:
        if isinstance(keys, str):
            raise TypeError("keys must be a sequence of API keys, not a single string")
        if not keys:
            raise ValueError("a key pool needs at least one API key")
        if strategy not in _STRATEGIES:
            raise ValueError(
                f"unknown key pool strategy {strategy!r}; use one of {sorted(_STRATEGIES)}"
            )
        if rate_limit_cooldown < 0 or auth_cooldown < 0:
            raise ValueError(
                f"cooldowns must be >= 0 seconds, got rate_limit_cooldown={rate_limit_cooldown} "
                f"and auth_cooldown={auth_cooldown}"
            )
        seen: dict[str, int] = {}
        for position, key in enumerate(keys, 1):
            if not isinstance(key, str) or not key.strip():
                raise ValueError(f"API key {position} of {len(keys)} in the pool is empty")
            if key in seen:
                raise ValueError(f"API key {position} in the pool repeats key {seen[key]}")
            seen[key] = position
        self._keys = [_Key(index, key) for index, key in enumerate(keys)]
        self._make_provider = make_provider
        self._strategy = strategy
        self._state_path = Path(state_path) if state_path is not None else None
        self._rate_limit_cooldown = rate_limit_cooldown
        self._auth_cooldown = auth_cooldown
        self._retry = retry
        self._clock = clock
        self._sleep = sleep
        self._name = name
        self._on_retry = on_retry
        self._cursor = 0  # round_robin: where the next request starts looking
        if self._state_path is not None:
            self._load(self._state_path)

    # -- ModelProvider -----------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name or self._primary().name

    @property
    def model(self) -> str:
        return self._primary().model

    @property
    def max_context_tokens(self) -> int:
        return self._primary().max_context_tokens

    @property
    def capabilities(self) -> ModelCapabilities:
        return self._primary().capabilities

    def count_tokens(self, text: str) -> int:
        return self._primary().count_tokens(text)

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Stream from one key's provider, after a `RouteChunk` naming it."""
        return self._stream(request)

    async def aclose(self) -> None:
        async with AsyncExitStack() as stack:
            for key in self._keys:
                if key.provider is not None:
                    stack.push_async_callback(key.provider.aclose)

    def state(self) -> list[KeyState]:
        """Every key in pool order, for diagnostics."""
        return [
            KeyState(key.label, key.uses, key.failures, key.cooldown_until, key.last_error)
            for key in self._keys
        ]

    # -- streaming ---------------------------------------------------------------------

    async def _stream(self, request: ModelRequest) -> AsyncGenerator[ModelChunk, None]:
        tried: set[_Key] = set()
        failed: list[tuple[_Key, ModelError]] = []
        try:
            while True:
                now = self._clock()
                key = self._pick(tried, now)
                if key is None:
                    raise self._exhausted(failed, now)
                tried.add(key)
                provider = self._provider(key)
                rate_limits = retries = 0
                while True:
                    key.uses += 1
                    relay = Relay(provider, request)
                    try:
                        async with aclosing(relay.chunks()) as chunks:
                            async for chunk in chunks:
                                yield chunk
                        key.last_error = None
                        return
                    except ModelError as error:
                        key.failures += 1
                        key.last_error = error.kind
                        if (
                            relay.produced
                            or error.kind not in _ROTATE_ON
                            or isinstance(error, Stalled)
                        ):
                            if key.secret in error.message:
                                raise _scrubbed(error, key) from None
                            raise
                        failure = error
                    delay = self._same_key_delay(failure, rate_limits, retries)
                    if delay is None:
                        break
                    if failure.kind == "rate_limited":
                        rate_limits += 1
                    else:
                        retries += 1
                    self._notify(key, failure, rate_limits + retries + 1, delay)
                    _log.info(
                        "key %s: %s; retrying it in %.2fs",
                        key.label,
                        _describe(failure, key),
                        delay,
                    )
                    await self._sleep(delay)
                self._cool(key, failure)
                failed.append((key, failure))
                _log.warning("key %s: %s; rotating", key.label, _describe(failure, key))
        finally:
            self._save()

    def _pick(self, tried: set[_Key], now: float) -> _Key | None:
        """The next key to use under the strategy, skipping cooling and tried keys."""
        keys = self._keys
        if self._strategy == "round_robin":
            count = len(keys)
            for offset in range(count):
                key = keys[(self._cursor + offset) % count]
                if key not in tried and key.cooldown_until <= now:
                    self._cursor = key.index + 1
                    return key
            return None
        available = [key for key in keys if key not in tried and key.cooldown_until <= now]
        if not available:
            return None
        if self._strategy == "least_used":
            return min(available, key=_uses)  # min keeps pool order among ties
        return available[0]

    def _same_key_delay(self, error: ModelError, rate_limits: int, retries: int) -> float | None:
        """Seconds to wait before retrying the same key, or None to rotate."""
        policy = self._retry
        if error.kind == "rate_limited":
            wait = error.retry_after
            if rate_limits or (wait is not None and wait > policy.backoff_max):
                return None
            return policy.delay(0, wait)
        if error.kind == "retryable" and retries < policy.max_retries:
            return policy.delay(retries, error.retry_after)
        return None

    def _notify(self, key: _Key, error: ModelError, attempt: int, delay: float) -> None:
        if self._on_retry is None:
            return
        attempts = max(attempt, self._retry.max_retries + 1)
        reason = retry_reason(error).replace(key.secret, key.label)
        notice = RetryNotice(attempt, attempts, delay, f"{reason} (key {key.label})", self.name)
        self._on_retry(notice)

    def _cool(self, key: _Key, error: ModelError) -> None:
        if error.kind == "rate_limited":
            wait = error.retry_after
            # Capped: a buggy header must not park a key (persistently) for weeks.
            seconds = self._rate_limit_cooldown if wait is None else min(wait, self._auth_cooldown)
        elif error.kind in ("auth", "billing"):
            seconds = self._auth_cooldown
        else:
            return
        key.cooldown_until = self._clock() + seconds

    def _exhausted(self, failed: list[tuple[_Key, ModelError]], now: float) -> ModelError:
        """The error for a request no key can serve: all cooling, or all tried and failed.

        `now` is the time `_pick` found no key, so the two agree on which keys cool.
        """
        count = len(self._keys)
        cooling = [key for key in self._keys if key.cooldown_until > now]
        if len(cooling) == count:
            soonest = min(cooling, key=_cooldown_until)
            wait = soonest.cooldown_until - now
            # Rate limits clear by waiting; if every key is rejected, waiting is pointless.
            kinds = {key.last_error for key in cooling}
            kind: ErrorKind = "rate_limited"
            if "rate_limited" not in kinds and None not in kinds and soonest.last_error:
                kind = soonest.last_error
            reasons = ", ".join(f"{key.label}: {key.last_error or 'cooling'}" for key in cooling)
            return ModelError(
                kind,
                f"all {count} keys are cooling down; next available in {math.ceil(wait)}s "
                f"({reasons})",
                retry_after=wait,
                provider=self.name,
            )
        last = failed[-1][1]
        reasons = "; ".join(f"{key.label}: {_describe(error, key)}" for key, error in failed)
        return last.restated(f"every available key failed: {reasons}", provider=self.name)

    def _provider(self, key: _Key) -> ModelProvider:
        """Built on first use: a key that is never needed never opens a client."""
        if key.provider is None:
            key.provider = self._make_provider(key.secret)
        return key.provider

    def _primary(self) -> ModelProvider:
        return self._provider(self._keys[0])

    # -- persistence -------------------------------------------------------------------

    def _load(self, path: Path) -> None:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return
        except (OSError, UnicodeDecodeError) as exc:
            _log.warning("cannot read key pool state %s (%s); starting fresh", path, exc)
            return
        try:
            entries = _parse_state(text)
        except ValueError as exc:
            _log.warning("key pool state %s is corrupt (%s); starting fresh", path, exc)
            return
        for key in self._keys:
            entry = entries.get(key.digest)
            if entry is not None:
                key.uses = entry["uses"]
                key.failures = entry["failures"]
                key.cooldown_until = float(entry["cooldown_until"])
                key.last_error = entry["last_error"]

    def _save(self) -> None:
        """Write the state atomically (temp file + rename), so a crash mid-write leaves the
        old file whole. Not fsynced: losing the latest counts costs one retried key."""
        path = self._state_path
        if path is None:
            return
        state = {
            "version": _STATE_VERSION,
            "keys": {
                key.digest: {
                    "uses": key.uses,
                    "failures": key.failures,
                    "cooldown_until": key.cooldown_until,
                    "last_error": key.last_error,
                }
                for key in self._keys
            },
        }
        temp: Path | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
            temp = Path(name)
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(state, file, indent=1)
            temp.replace(path)
        except OSError as exc:
            _log.warning("cannot save key pool state to %s: %s", path, exc)
            if temp is not None:
                temp.unlink(missing_ok=True)


def _parse_state(text: str) -> dict[str, dict[str, Any]]:
    """The per-digest entries of a state file; ValueError names what is wrong."""
    try:
        state = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(state, dict) or state.get("version") != _STATE_VERSION:
        raise ValueError(f"not a version {_STATE_VERSION} key pool state object")
    entries = state.get("keys")
    if not isinstance(entries, dict):
        raise ValueError("'keys' is not an object")
    for digest, entry in entries.items():
        if not (
            isinstance(entry, dict)
            and _count(entry.get("uses"))
            and _count(entry.get("failures"))
            and type(entry.get("cooldown_until")) in (int, float)
            and math.isfinite(entry["cooldown_until"])
            and (entry.get("last_error") is None or entry.get("last_error") in _ERROR_KINDS)
        ):
            raise ValueError(f"entry {digest[:12]}… is malformed: {entry!r}"[:300])
    return entries


def _count(value: object) -> bool:
    return type(value) is int and value >= 0


def _describe(error: ModelError, key: _Key) -> str:
    """`str(error)` with the key, should a server echo it back, replaced by its label."""
    return str(error).replace(key.secret, key.label)


def _scrubbed(error: ModelError, key: _Key) -> ModelError:
    return error.restated(error.message.replace(key.secret, key.label))


def _uses(key: _Key) -> int:
    return key.uses


def _cooldown_until(key: _Key) -> float:
    return key.cooldown_until
