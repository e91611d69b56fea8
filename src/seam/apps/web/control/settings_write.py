"""`PATCH /api/settings`: values written back into `config.toml`, its comments and order
kept (tomlkit), validated by the same pydantic models `seam` reads it with, atomically.

All or nothing: every value is checked (a known `section.key` the form may edit, the
right JSON type, no masked placeholder, not a key the environment sets over the file),
then the whole patched file is validated as `ConfigFile`; only then is it written, to a
temporary file in the same folder renamed over the old one, so a reader never sees half
a file and a bad value leaves the file as it was. `null` removes a key (its default again).
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomlkit
from pydantic import ValidationError
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Table

from seam.apps.web.control.settings_mask import is_placeholder
from seam.apps.web.control.settings_view import (
    ENV_OVERRIDES,
    config_schema,
    fresh_settings,
    leaves,
)
from seam.apps.web.errors import ApiError
from seam.wiring.settings import ConfigFile, Settings, validation_problems

# One writer of config.toml at a time in this process, whichever section edits it (the
# Settings form, an MCP server's approval); the CLI writes its own files, last rename wins.
CONFIG_WRITING = threading.Lock()
MAX_TEXT = 10_000
KINDS: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
}


def _field_type(section: str, name: str) -> str:
    """The JSON type a form value of `section.name` must have (`any` when unsaid)."""
    schema = config_schema()
    model = ConfigFile.model_fields[section].annotation
    prop = schema["$defs"][getattr(model, "__name__", "")]["properties"][name]
    options = [p for p in prop.get("anyOf", [prop]) if p.get("type") != "null"]
    return str(options[0].get("type", "any")) if options else "any"


def _check_type(key: str, kind: str, expected: str, value: Any) -> Any:
    """`value` as it will be written (a number field's integer as a float), or 400."""
    items = value if kind == "list" else [value]
    if kind == "list" and not isinstance(value, list):
        raise ApiError(400, f"{key}: expected a list")
    wanted = KINDS.get(expected)
    for item in items:
        bad = isinstance(item, bool) and expected != "boolean"
        if bad or (wanted is not None and not isinstance(item, wanted)):
            raise ApiError(400, f"{key}: expected {expected}, got {type(item).__name__}")
        if isinstance(item, str) and len(item) > MAX_TEXT:
            raise ApiError(400, f"{key}: longer than {MAX_TEXT} characters")
    if expected == "number" and kind == "scalar":
        return float(value)
    return value


def checked(values: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    """The values to write, each refused with a 400 naming its key when it may not be."""
    known = {key: (kind, section, name) for key, section, name, kind in leaves()}
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key not in known:
            raise ApiError(400, f"{key}: not a setting (section.key, e.g. agent.max_iterations)")
        kind, section, name = known[key]
        if kind == "table":
            raise ApiError(400, f"{key}: a table; edit it in config.toml")
        variable = ENV_OVERRIDES.get(key, ("", False))[0]
        if variable and env.get(variable):
            raise ApiError(
                400, f"{key}: set by the environment ({variable}), which wins over config.toml"
            )
        if is_placeholder(value):
            raise ApiError(400, f"{key}: a masked placeholder, not a value; type the real one")
        if value is not None:
            value = _check_type(key, kind, _field_type(section, name), value)
        out[key] = value
    return out


def patched(text: str, values: Mapping[str, Any]) -> str:
    """`text` (a TOML document) with `values` set, everything else kept as it was."""
    doc = tomlkit.parse(text)
    for key, value in values.items():
        section, name = key.split(".", 1)
        table = doc.get(section)
        if table is None:
            if value is None:
                continue
            table = tomlkit.table()
            doc.add(section, table)
        if not isinstance(table, (Table, dict)):
            raise ApiError(400, f"{key}: [{section}] in config.toml is not a table")
        if value is None:
            table.pop(name, None)
        else:
            table[name] = value
    return tomlkit.dumps(doc)


def validate(text: str, path: Path) -> None:
    """400 naming each key that `ConfigFile` refuses in the patched document."""
    try:
        ConfigFile.model_validate(tomlkit.parse(text).unwrap())
    except ValidationError as exc:
        problems = validation_problems(exc, limit=5)
        raise ApiError(400, f"nothing written to {path}: {problems}") from None


def write_atomic(path: Path, text: str) -> None:
    """`text` into `path` through a temporary file renamed over it (its mode kept)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o600
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".config.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        Path(tmp).chmod(mode)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def apply_patch(running: Settings, values: Mapping[str, Any]) -> list[str]:
    """Check, patch, validate and write `values`; the keys written."""
    settings = fresh_settings(running)  # 409 when the file is already unreadable
    wanted = checked(values, settings.env)
    path = settings.config_path
    with CONFIG_WRITING:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = ""
        try:
            new = patched(text, wanted)
        except TOMLKitError as exc:
            raise ApiError(409, f"{path}: tomlkit cannot edit it: {exc}") from None
        validate(new, path)
        if new != text:
            write_atomic(path, new)
    return sorted(wanted)


__all__ = ["CONFIG_WRITING", "apply_patch", "checked", "patched", "validate", "write_atomic"]
