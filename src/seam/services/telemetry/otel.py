"""The `Tracer` contract over the OpenTelemetry SDK.

A runtime gets its own `TracerProvider` (never the global one, so two runtimes in one
process, or a test, do not share exporters). A `turn` span opened with a `trace_key`
takes its trace id from the key's hash (`_KeyedIds`): the submission id names the trace,
so a resume after a crash, in a new process reading the same store, continues the
original trace without the trace context being stored anywhere.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
from collections.abc import Iterator
from contextlib import AbstractContextManager

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
from opentelemetry.trace import Status, StatusCode

from seam.contracts.tracing import NOOP_SPAN, Attributes, AttributeValue, Span

_FORCED_TRACE_ID: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "seam_trace_id", default=None
)


def trace_id_for(key: str) -> int:
    """The 128-bit trace id a `trace_key` names (never 0, which OpenTelemetry rejects)."""
    value = int.from_bytes(hashlib.sha256(key.encode()).digest()[:16], "big")
    return value or 1


class _KeyedIds(IdGenerator):
    """Random ids, except a root span's trace id while a trace key is set."""

    def __init__(self) -> None:
        self._random = RandomIdGenerator()

    def generate_span_id(self) -> int:
        return self._random.generate_span_id()

    def generate_trace_id(self) -> int:
        forced = _FORCED_TRACE_ID.get()
        return forced if forced is not None else self._random.generate_trace_id()


class _OtelSpan:
    """An SDK span seen through the contract."""

    __slots__ = ("_span",)

    def __init__(self, span: trace.Span) -> None:
        self._span = span

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        self._span.set_attribute(key, value)

    def add_event(self, name: str, attributes: Attributes | None = None) -> None:
        self._span.add_event(name, dict(attributes or {}))

    def record_error(self, error: BaseException | str) -> None:
        if isinstance(error, BaseException):
            self._span.record_exception(error)
            message = f"{type(error).__name__}: {error}"
            self._span.set_attribute("error.type", type(error).__name__)
        else:
            message = error
            self._span.set_attribute("error.type", message.split(":", 1)[0][:64] or "error")
        self._span.set_status(Status(StatusCode.ERROR, message[:500]))

    def end(self) -> None:
        self._span.end()


class OtelTracer:
    """Spans through a private `TracerProvider` exporting with `exporter` (batched) or
    through the `processor` given (a test's `SimpleSpanProcessor`)."""

    enabled = True

    def __init__(
        self,
        exporter: SpanExporter | None = None,
        *,
        processor: SpanProcessor | None = None,
        service_name: str = "seam",
    ) -> None:
        self.provider = TracerProvider(
            resource=Resource.create({"service.name": service_name}), id_generator=_KeyedIds()
        )
        if processor is None and exporter is not None:
            processor = BatchSpanProcessor(exporter)
        if processor is not None:
            self.provider.add_span_processor(processor)
        self._tracer = self.provider.get_tracer("seam")

    def span(
        self, name: str, attributes: Attributes | None = None, *, trace_key: str | None = None
    ) -> AbstractContextManager[Span]:
        return self._span(name, attributes, trace_key)

    @contextlib.contextmanager
    def _span(self, name: str, attributes: Attributes | None, key: str | None) -> Iterator[Span]:
        token = None
        if key is not None and not trace.get_current_span().get_span_context().is_valid:
            token = _FORCED_TRACE_ID.set(trace_id_for(key))
        try:
            span = self._tracer.start_span(name, attributes=dict(attributes or {}))
        finally:
            if token is not None:
                _FORCED_TRACE_ID.reset(token)
        with trace.use_span(span, end_on_exit=True, record_exception=True):
            yield _OtelSpan(span)

    def start_span(
        self, name: str, attributes: Attributes | None = None, *, start_time_ns: int | None = None
    ) -> Span:
        span = self._tracer.start_span(
            name, attributes=dict(attributes or {}), start_time=start_time_ns
        )
        return _OtelSpan(span)

    def current(self) -> Span:
        span = trace.get_current_span()
        if not span.get_span_context().is_valid or not span.is_recording():
            return NOOP_SPAN
        return _OtelSpan(span)

    def shutdown(self) -> None:
        """Export what is still batched, then stop."""
        self.provider.shutdown()


def otlp_tracer(endpoint: str, *, service_name: str = "seam") -> OtelTracer:
    """A tracer exporting over OTLP/HTTP (protobuf) to `endpoint` (the collector's base
    URL, `/v1/traces` added unless it is there)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    url = endpoint.rstrip("/")
    if not url.endswith("/v1/traces"):
        url += "/v1/traces"
    return OtelTracer(OTLPSpanExporter(endpoint=url), service_name=service_name)
