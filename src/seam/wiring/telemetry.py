"""`[telemetry]`: whether spans are exported, and where.

Off by default. `otlp_endpoint` (or the standard `OTEL_EXPORTER_OTLP_ENDPOINT`, which
the config key overrides) turns on the OTLP/HTTP exporter; only then is the
OpenTelemetry SDK imported (the `telemetry` extra), so a runtime without it pays
nothing. `slow_store_ms`: store operations at least this slow become spans.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from seam.contracts.model import OnRetry, RetryNotice
from seam.contracts.tracing import NOOP_TRACER, Tracer

log = logging.getLogger("seam.telemetry")


class TelemetrySection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    otlp_endpoint: str | None = None
    service_name: str = "seam"
    slow_store_ms: float = Field(default=50.0, ge=0)

    @field_validator("otlp_endpoint")
    @classmethod
    def _http(cls, value: str | None) -> str | None:
        if value is not None and value.strip() and not value.startswith(("http://", "https://")):
            raise ValueError(f"must start with http:// or https://, got {value!r}")
        return value


class _HasTelemetry(Protocol):
    @property
    def telemetry(self) -> TelemetrySection: ...


class TelemetrySettings(Protocol):
    """What the tracer is built from (`wiring.settings.Settings` is one; named here so
    this module, whose section the settings import, does not import them back)."""

    @property
    def config(self) -> _HasTelemetry: ...

    @property
    def env(self) -> Mapping[str, str]: ...


def otlp_endpoint(section: TelemetrySection, env: Mapping[str, str]) -> str | None:
    """The collector's URL: the config key, else the standard environment variable."""
    endpoint = section.otlp_endpoint or env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or None
    return endpoint.strip() or None if endpoint else None


def build_tracer(settings: TelemetrySettings | None) -> Tracer:
    """The OTLP tracer `[telemetry]` asks for, else the no-op tracer (also when the SDK
    is not installed: a warning says so, the runtime still runs)."""
    if settings is None:
        return NOOP_TRACER
    section = settings.config.telemetry
    endpoint = otlp_endpoint(section, settings.env)
    if endpoint is None:
        return NOOP_TRACER
    try:
        from seam.services.telemetry.otel import otlp_tracer
    except ImportError:
        log.warning(
            "[telemetry] otlp_endpoint is set but the OpenTelemetry SDK is not installed "
            "(pip install 'seam[telemetry]'); tracing is off"
        )
        return NOOP_TRACER
    return otlp_tracer(endpoint, service_name=section.service_name)


def noting_retries(tracer: Tracer, on_retry: OnRetry | None) -> OnRetry | None:
    """`on_retry` that also notes each provider retry on the current span (the model
    call's): a `retry` event and the `seam.retries` count so far."""
    if tracer is NOOP_TRACER:
        return on_retry

    def note(notice: RetryNotice) -> None:
        span = tracer.current()
        span.set_attribute("seam.retries", max(notice.attempt - 1, 0))
        span.add_event(
            "retry", {"seam.retry.reason": notice.reason, "seam.retry.delay_s": notice.delay}
        )
        if on_retry is not None:
            on_retry(notice)

    return note


def shutdown_tracer(tracer: Tracer) -> None:
    """Flush and stop an exporting tracer (the no-op one has nothing to flush)."""
    shutdown = getattr(tracer, "shutdown", None)
    if shutdown is not None:
        try:
            shutdown()
        except Exception:  # a collector that went away must not fail the exit
            log.warning("could not flush the traces", exc_info=True)
