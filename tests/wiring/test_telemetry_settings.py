"""`[telemetry]`: off by default, on with `otlp_endpoint` or OTEL_EXPORTER_OTLP_ENDPOINT."""

from __future__ import annotations

from pathlib import Path

import pytest

from seam.contracts.tracing import NOOP_TRACER
from seam.services.telemetry.otel import OtelTracer
from seam.wiring.settings import ConfigError, load_settings
from seam.wiring.telemetry import build_tracer, otlp_endpoint


def test_tracing_is_off_without_an_endpoint(tmp_path: Path) -> None:
    settings = load_settings({}, home=tmp_path)
    assert settings.config.telemetry.slow_store_ms == 50
    assert build_tracer(settings) is NOOP_TRACER


def test_the_standard_variable_turns_it_on_and_the_config_key_wins(tmp_path: Path) -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}
    settings = load_settings(env, home=tmp_path)
    assert otlp_endpoint(settings.config.telemetry, settings.env) == "http://127.0.0.1:4318"
    tracer = build_tracer(settings)
    assert isinstance(tracer, OtelTracer)
    tracer.shutdown()
    (tmp_path / "config.toml").write_text(
        '[telemetry]\notlp_endpoint = "http://collector:4318"\nslow_store_ms = 5\n'
    )
    settings = load_settings(env, home=tmp_path)
    assert otlp_endpoint(settings.config.telemetry, settings.env) == "http://collector:4318"
    assert settings.config.telemetry.slow_store_ms == 5


def test_a_bad_endpoint_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[telemetry]\notlp_endpoint = "collector:4318"\n')
    with pytest.raises(ConfigError, match="otlp_endpoint"):
        load_settings({}, home=tmp_path)
