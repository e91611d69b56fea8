"""`GET /api/settings`: the configuration in effect, read fresh from `config.toml` and the
server's environment on every request, each value with where it came from.

The running server's own `Settings` were frozen when it started; this reads the file
again, so an edit by `seam` commands or an editor shows at once. Each value is keyed
`section.key` (a whole table such as `guard` or `mcp.servers` is one value), with its
source: `default`, `file`, or `environment` (with the variable's name: the variables
`load_settings` lets win over the file). Every secret is masked (settings_mask.py).
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel

from seam.apps.web.control.settings_mask import MASK, mask
from seam.apps.web.errors import ApiError
from seam.wiring.secrets import secret_redactor
from seam.wiring.settings import ConfigError, ConfigFile, Settings, load_settings

# Keys an environment variable sets over the file (as `load_settings` and the telemetry
# wiring apply them), and whether the variable wins only when the file leaves it empty.
ENV_OVERRIDES: dict[str, tuple[str, bool]] = {
    "model.model": ("SEAM_MODEL", False),
    "model.base_url": ("OPENAI_BASE_URL", False),
    "store.url": ("SEAM_STORE_URL", False),
    "telemetry.otlp_endpoint": ("OTEL_EXPORTER_OTLP_ENDPOINT", True),
}
# The settings that name a variable holding a key: shown as set or not, never its value.
KEY_VARIABLES = (
    "model.api_key_env",
    "model.api_keys_env",
    "anthropic.api_key_env",
    "anthropic.api_keys_env",
)
SCALARS = frozenset({"string", "integer", "number", "boolean"})
RESTART = (
    "Saved to config.toml: seam commands started from now on read it; a running seam serve "
    "(and seam gateway) keeps the settings it started with until it is restarted."
)


def fresh_settings(running: Settings) -> Settings:
    """The settings `running`'s home and environment give now (config.toml read again);
    409 with the file's problem when it cannot be read."""
    try:
        return load_settings(running.env, home=running.home, working_dir=running.working_dir)
    except ConfigError as exc:
        raise ApiError(409, f"{exc} (fix the file; seam doctor says the same)") from None


def file_data(settings: Settings) -> dict[str, Any]:
    """What config.toml itself holds (already checked readable by `fresh_settings`)."""
    path = settings.config_path
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:  # changed under us since it was loaded
        raise ApiError(409, f"{path}: cannot be read now: {exc}") from None


@functools.cache
def config_schema() -> dict[str, Any]:
    """`ConfigFile`'s JSON Schema, built once (the models do not change while running)."""
    return ConfigFile.model_json_schema()


def leaf_kind(prop: Mapping[str, Any], defs: Mapping[str, Any]) -> str:
    """`scalar`, `list` (of scalars) or `table` (anything else) for a schema property:
    the page edits the first two in its form and shows tables read-only."""
    if "$ref" in prop:
        prop = defs[str(prop["$ref"]).rsplit("/", 1)[-1]]
    options = [p for p in prop.get("anyOf", [prop]) if p.get("type") != "null"]
    if len(options) != 1:
        return "table"
    only = options[0]
    if only.get("type") in SCALARS or "enum" in only:
        return "scalar"
    if only.get("type") == "array" and only.get("items", {}).get("type") in SCALARS:
        return "list"
    return "table"


def leaves() -> Iterator[tuple[str, str, str, str]]:
    """(key, section, name, kind) for every value of `ConfigFile`, in its order: a section
    model's fields one by one, a free-form table (`guard`, `web`, ...) as one value."""
    defs = config_schema().get("$defs", {})
    for section, info in ConfigFile.model_fields.items():
        model = info.annotation
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            yield section, section, "", "table"
            continue
        props = defs[model.__name__]["properties"]
        for name in model.model_fields:
            yield f"{section}.{name}", section, name, leaf_kind(props[name], defs)


def _env_source(key: str, file_value: Any, env: Mapping[str, str]) -> str | None:
    """The variable that sets `key` now, or None."""
    if key not in ENV_OVERRIDES:
        return None
    variable, only_when_empty = ENV_OVERRIDES[key]
    if not env.get(variable) or (only_when_empty and file_value):
        return None
    return variable


def effective(settings: Settings) -> dict[str, Any]:
    """Every value in effect, masked, with its source and whether the form may edit it."""
    redact = secret_redactor(settings)
    data = file_data(settings)
    dumped = settings.config.model_dump(mode="json")
    values: dict[str, Any] = {}
    for key, section, name, kind in leaves():
        in_file = section in data and (not name or name in data[section])
        value = dumped[section][name] if name else dumped[section]
        item: dict[str, Any] = {"source": "file" if in_file else "default", "kind": kind}
        variable = _env_source(key, value, settings.env)
        if variable is not None:
            value = settings.env[variable]
            item.update(source="environment", variable=variable)
        shown = mask(value, redact, name or section)
        item.update(value=shown, masked=shown != value)
        item["editable"] = kind != "table" and variable is None
        values[key] = item
    return values


def key_variables(settings: Settings) -> list[dict[str, Any]]:
    """The variables the settings take keys from: whether each is set (never its value)."""
    dumped = settings.config.model_dump()
    shown = []
    for key in KEY_VARIABLES:
        section, name = key.split(".")
        variable = str(dumped[section][name])
        is_set = bool(settings.env.get(variable))
        shown.append(
            {"setting": key, "variable": variable, "set": is_set, "value": MASK if is_set else ""}
        )
    return shown


def settings_body(running: Settings) -> dict[str, Any]:
    """`GET /api/settings`'s answer."""
    settings = fresh_settings(running)
    return {
        "path": str(settings.config_path),
        "exists": settings.config_path.exists(),
        "values": effective(settings),
        "keys": key_variables(settings),
        "restart": RESTART,
    }


__all__ = [
    "ENV_OVERRIDES",
    "RESTART",
    "config_schema",
    "effective",
    "fresh_settings",
    "leaves",
    "settings_body",
]
