"""`config.toml` as the dashboard reads and writes it: read fresh on every request (an
edit by hand or by the CLI shows at once), and one MCP server's `approval` written back
with tomlkit, so the file keeps its comments, order and layout.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import tomlkit
from pydantic import ValidationError
from tomlkit.exceptions import TOMLKitError

from seam.apps.web.control import settings_view
from seam.apps.web.control.settings_write import CONFIG_WRITING, write_atomic
from seam.apps.web.errors import ApiError
from seam.wiring.settings import McpServerSection, validation_problems

if TYPE_CHECKING:
    from seam.apps.web.control.deps import Control
    from seam.wiring.settings import Settings


def fresh_settings(control: Control) -> Settings:
    """The server's settings with `config.toml` as it is now (not as it was at start-up);
    a broken file is a 409 saying what is wrong with it."""
    return settings_view.fresh_settings(control.need_settings())


def set_approval(path: Path, name: str, approval: str) -> None:
    """Set `[mcp.servers.NAME] approval` in the file at `path`, checked by the same model
    `config.toml` is loaded with, and written atomically (a reader sees the old file or the
    new one). 404 when the file names no such server."""
    with CONFIG_WRITING:
        document = _parse(path)
        server = _server_table(document, name)
        if server is None:
            raise ApiError(404, f"no MCP server {name!r} in {path} ([mcp.servers.{name}])")
        server["approval"] = approval
        _check(server, path, name)
        write_atomic(path, tomlkit.dumps(document))


def _check(server: Any, path: Path, name: str) -> None:
    """409 naming what the same model `config.toml` is loaded with refuses."""
    try:
        McpServerSection.model_validate(server.unwrap())
    except ValidationError as exc:
        problems = validation_problems(exc, whole="section")
        raise ApiError(409, f"{path}: mcp.servers.{name}: {problems}") from None


def _parse(path: Path) -> tomlkit.TOMLDocument:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ApiError(404, f"{path} does not exist: no MCP servers are configured") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ApiError(409, f"{path}: cannot read: {exc}") from None
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ApiError(409, f"{path}: not valid TOML: {exc}") from None


def _server_table(document: tomlkit.TOMLDocument, name: str) -> Any:
    """The `[mcp.servers.NAME]` table (a tomlkit container, so edits keep the layout)."""
    node: Any = document
    for key in ("mcp", "servers", name):
        if not hasattr(node, "get"):
            return None
        node = node.get(key)
        if node is None:
            return None
    return node if hasattr(node, "unwrap") and isinstance(node.unwrap(), dict) else None


__all__ = ["fresh_settings", "set_approval"]
