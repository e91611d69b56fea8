"""Config loading: any config.toml gives a valid config or a `ConfigError` that says
what is wrong, never another exception (a traceback for the person to read)."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from seam.wiring.guard import build_guardrail, guard_section
from seam.wiring.pricing import price_table
from seam.wiring.settings import ConfigError, Settings, load_settings
from seam.wiring.telemetry import build_tracer
from seam.wiring.web_keys import web_section

SECTIONS = [
    "model",
    "anthropic",
    "pool",
    "side_models",
    "local",
    "agent",
    "context",
    "reflection",
    "store",
    "sandbox",
    "sessions",
    "mcp",
    "skills",
    "telemetry",
    "guard",
    "prices",
    "web",
    "nope",
]
KEYS = [
    "provider",
    "name",
    "base_url",
    "api_key_env",
    "path",
    "lease_seconds",
    "max_attempts",
    "personality",
    "max_iterations",
    "streaming_timeout",
    "result_budget_chars",
    "enabled",
    "otlp_endpoint",
    "slow_store_ms",
    "allow",
    "deny",
    "approval_timeout",
    "mode",
    "input",
    "output",
    "cors_origins",
    "compress_at",
    "window",
    "idle_end",
    "servers",
    "command",
    "x",
]
scalar = st.one_of(
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["http://127.0.0.1:4318", "openai", "anthropic", "local", "off", "*", "~/x"]),
)
value = st.recursive(
    scalar,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)
    ),
    max_leaves=6,
)
tables = st.dictionaries(
    st.sampled_from(SECTIONS),
    st.dictionaries(st.sampled_from(KEYS) | st.text(min_size=1, max_size=5), value, max_size=4),
    max_size=4,
)


def _toml_value(item: Any) -> str:
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, float):
        if math.isnan(item):
            return "nan"
        if math.isinf(item):
            return "inf" if item > 0 else "-inf"
        return repr(item)
    if isinstance(item, int):
        return str(item)
    if isinstance(item, str):
        return json.dumps(item)  # a TOML basic string is a JSON string for these
    if isinstance(item, list):
        return "[" + ", ".join(_toml_value(v) for v in item) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in item.items()) + "}"


def _toml(config: dict[str, dict[str, Any]]) -> str:
    out = []
    for section, keys in config.items():
        out.append(f"[{section}]")
        out += [f"{json.dumps(k)} = {_toml_value(v)}" for k, v in keys.items()]
    return "\n".join(out) + "\n"


def _load(text: str | bytes) -> Settings | None:
    with tempfile.TemporaryDirectory() as home:
        path = Path(home) / "config.toml"
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        try:
            settings = load_settings({}, home=Path(home))
            # Sections their owners validate when they are first used.
            guard_section(settings)
            build_guardrail(settings)
            price_table(settings.config.prices, where=str(path))
            web_section(settings)
            tracer = build_tracer(settings)
            getattr(tracer, "shutdown", lambda: None)()
        except ConfigError as exc:
            assert str(exc)
            return None
        return settings


@given(tables.map(_toml))
@example("[telemetry]\nslow_store_ms = -1\n")
@example("[store]\nlease_seconds = nan\n")
def test_any_toml_is_a_config_or_a_config_error(text: str) -> None:
    _load(text)


@given(st.binary(max_size=80) | st.text(max_size=80))
def test_any_file_is_a_config_or_a_config_error(text: str | bytes) -> None:
    _load(text)
