"""Structured logs: JSON lines under $SEAM_HOME/logs, redacted, with the trace and the
turn's session, rotated by size."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from seam.apps.cli.json_log import JsonLinesHandler
from seam.core.log_fields import LOG_FIELDS
from seam.plugins.safety.redact import RedactingFilter, redact
from seam.services.telemetry.otel import OtelTracer
from seam.wiring.logs import json_log_file

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


@pytest.fixture
def logger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[logging.Logger]:
    monkeypatch.setenv("SEAM_HOME", str(tmp_path))
    handler = JsonLinesHandler(max_bytes=400, keep=2)
    handler.addFilter(RedactingFilter(redact))
    log = logging.getLogger("seam.test.jsonlogs")
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    log.propagate = False
    yield log
    log.removeHandler(handler)
    handler.close()


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(raw) for raw in path.read_text().splitlines()]


def test_a_line_is_json_redacted_and_names_its_turn_and_trace(
    logger: logging.Logger, tmp_path: Path
) -> None:
    tracer = OtelTracer(processor=SimpleSpanProcessor(InMemorySpanExporter()))
    fields = LOG_FIELDS.set(
        {"session": 'agent-session:["local","default","s"]', "submission": "sub-1"}
    )
    try:
        with tracer.span("turn", trace_key="sub-1"):
            logger.warning("the key is %s", SECRET)
    finally:
        LOG_FIELDS.reset(fields)
    logger.info("outside")
    path = json_log_file()
    assert path == tmp_path / "logs" / "seam.jsonl"
    text = path.read_text()
    assert SECRET not in text
    first, second = _lines(path)
    assert first["level"] == "warning"
    assert first["logger"] == "seam.test.jsonlogs"
    assert first["message"] == "the key is [REDACTED:openai]"
    assert first["submission"] == "sub-1"
    assert isinstance(first["trace_id"], str) and len(first["trace_id"]) == 32
    assert isinstance(first["span_id"], str) and len(first["span_id"]) == 16
    assert "trace_id" not in second and "session" not in second


def test_a_traceback_is_kept_redacted(logger: logging.Logger) -> None:
    try:
        raise RuntimeError(f"failed with {SECRET}")
    except RuntimeError:
        logger.exception("it broke")
    [line] = _lines(json_log_file())
    assert "RuntimeError" in str(line["exc"]) and SECRET not in str(line["exc"])


def test_the_log_rotates_by_size_keeping_the_newest_files(logger: logging.Logger) -> None:
    for i in range(40):
        logger.info("line %03d %s", i, "x" * 60)
    path = json_log_file()
    names = sorted(p.name for p in path.parent.iterdir())
    assert names == ["seam.jsonl", "seam.jsonl.1", "seam.jsonl.2"]
    newest = _lines(path)[-1]
    assert str(newest["message"]).startswith("line 039")
    for file in path.parent.iterdir():
        assert file.stat().st_size <= 400
