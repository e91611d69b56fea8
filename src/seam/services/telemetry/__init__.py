"""OpenTelemetry behind the `Tracer` contract (the `telemetry` extra)."""
