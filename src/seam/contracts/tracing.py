"""Tracing: the spans a turn, its model calls, its tool calls and slow store operations
open, without the core importing a tracing library.

The core receives a `Tracer` at construction like every other collaborator and defaults
to `NOOP_TRACER`, whose spans are one shared object that does nothing, so a runtime with
tracing off pays a context-manager enter and exit per span and nothing more. The
OpenTelemetry implementation lives in `services/telemetry/`; wiring builds it only when
`[telemetry] otlp_endpoint` (or `OTEL_EXPORTER_OTLP_ENDPOINT`) is set.

Attribute names follow the OpenTelemetry GenAI semantic conventions where they exist
(`gen_ai.operation.name`, `gen_ai.request.model`, `gen_ai.usage.input_tokens`, ...);
Seam's own are under `seam.`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Protocol

AttributeValue = str | bool | int | float | Sequence[str]
Attributes = Mapping[str, AttributeValue]


class Span(Protocol):
    def set_attribute(self, key: str, value: AttributeValue) -> None: ...

    def add_event(self, name: str, attributes: Attributes | None = None) -> None: ...

    def record_error(self, error: BaseException | str) -> None:
        """Mark the span failed, with the error's type and message."""
        ...

    def end(self) -> None:
        """End a span from `start_span` (a `span(...)` block ends its own)."""
        ...


class Tracer(Protocol):
    def span(
        self, name: str, attributes: Attributes | None = None, *, trace_key: str | None = None
    ) -> AbstractContextManager[Span]:
        """A span that is the current one for the block (spans opened inside are its
        children). `trace_key`, given to a span with no parent, makes its trace id a
        function of the key: every attempt of one submission (a retry, a resume after a
        crash in another process) lands in the same trace, with nothing stored."""
        ...

    def start_span(
        self, name: str, attributes: Attributes | None = None, *, start_time_ns: int | None = None
    ) -> Span:
        """A child of the current span that is not made current; the caller ends it.
        `start_time_ns` (time.time_ns()) backdates it: a store operation found slow
        only once it returned."""
        ...

    def current(self) -> Span:
        """The current span (the no-op span when there is none)."""
        ...


class _NoopSpan:
    __slots__ = ()

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        pass

    def add_event(self, name: str, attributes: Attributes | None = None) -> None:
        pass

    def record_error(self, error: BaseException | str) -> None:
        pass

    def end(self) -> None:
        pass

    def __enter__(self) -> _NoopSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


NOOP_SPAN = _NoopSpan()


class NoopTracer:
    """Tracing off: every span is `NOOP_SPAN` (no allocation per span)."""

    __slots__ = ()
    enabled = False

    def span(
        self, name: str, attributes: Attributes | None = None, *, trace_key: str | None = None
    ) -> AbstractContextManager[Span]:
        return NOOP_SPAN

    def start_span(
        self, name: str, attributes: Attributes | None = None, *, start_time_ns: int | None = None
    ) -> Span:
        return NOOP_SPAN

    def current(self) -> Span:
        return NOOP_SPAN


NOOP_TRACER = NoopTracer()
