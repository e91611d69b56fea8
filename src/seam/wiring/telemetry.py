"""`[telemetry]`: whether spans are exported, and where.

Off by default. `otlp_endpoint` (or the standard `OTEL_EXPORTER_OTLP_ENDPOINT`, which
the config key overrides) turns on the OTLP/HTTP exporter; only then is the
OpenTelemetry SDK imported (the `telemetry` extra), so a runtime without it pays
nothing. `slow_store_ms`: store operations at least this slow become spans. What a
tracer does with a retry or at exit is services/telemetry/spans.py (re-exported here).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from seam.contracts.tracing import NOOP_TRACER, Tracer
from seam.services.telemetry.spans import noting_retries, shutdown_tracer

log = logging.getLogger("seam.telemetry")

__all__ = [
    "TelemetrySection",
    "TelemetrySettings",
    "build_tracer",
    "noting_retries",
    "otlp_endpoint",
    "shutdown_tracer",
]


class TelemetrySection(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # as settings._Section

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
