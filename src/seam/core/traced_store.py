"""A store wrapper that reports its slow operations as spans.

Only operations slower than the threshold become spans (`[telemetry] slow_store_ms`,
default 50): a turn makes dozens of store calls and a trace of each would bury the
model and tool spans. The span is opened after the fact, backdated to the call's start,
as a child of whatever span was current (the turn, a model call).
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any

from seam.contracts.tracing import Tracer

DEFAULT_SLOW_STORE_MS = 50.0


class TracedStore:
    """Delegates every attribute to `store`; its coroutine methods are timed."""

    def __init__(self, store: Any, tracer: Tracer, *, slow_ms: float = DEFAULT_SLOW_STORE_MS):
        self._store = store
        self._tracer = tracer
        self._slow_ns = int(slow_ms * 1_000_000)
        self._timed: dict[str, Callable[..., Awaitable[Any]]] = {}

    @property
    def wrapped(self) -> Any:
        return self._store

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._store, name)
        if not inspect.iscoroutinefunction(value):
            return value
        timed = self._timed.get(name)
        if timed is None:
            timed = self._timed[name] = self._time(name, value)
        return timed

    def _time(
        self, name: str, method: Callable[..., Awaitable[Any]]
    ) -> Callable[..., Awaitable[Any]]:
        tracer = self._tracer
        slow_ns = self._slow_ns
        system = type(self._store).__name__

        @functools.wraps(method)
        async def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.time_ns()
            failed: BaseException | None = None
            try:
                return await method(*args, **kwargs)
            except BaseException as exc:
                failed = exc
                raise
            finally:
                if time.time_ns() - started >= slow_ns:
                    span = tracer.start_span(
                        f"store {name}",
                        {"db.operation.name": name, "db.system.name": system},
                        start_time_ns=started,
                    )
                    if failed is not None:
                        span.record_error(failed)
                    span.end()

        return timed
