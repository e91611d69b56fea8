"""Where `scripts/ensure-mcp-servers` put the third-party MCP servers, and their specs.

The folder is read when this module is imported, before the suite's fixtures give each
test a home of its own (the default lies under the real `~/.cache`). Without the servers
a test fails in CI (`.ci/run` installs them) and skips elsewhere, saying how to get them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from seam.plugins.mcp.spec import ServerSpec

_CACHE = os.environ.get("SEAM_BUILD_CACHE") or str(
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "seam-build"
)
FOLDER = Path(os.environ.get("SEAM_MCP_SERVERS") or Path(_CACHE) / "mcp-servers")
EVERYTHING = FOLDER / "npm" / "node_modules" / ".bin" / "mcp-server-everything"
TIME = FOLDER / "venv" / "bin" / "mcp-server-time"
FETCH = FOLDER / "venv" / "bin" / "mcp-server-fetch"


def need(*programs: Path) -> None:
    missing = [str(p) for p in programs if not p.exists()]
    if missing:
        message = f"not installed: {', '.join(missing)} (run scripts/ensure-mcp-servers)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def everything(**fields: Any) -> ServerSpec:
    """npm's @modelcontextprotocol/server-everything over stdio."""
    need(EVERYTHING)
    return ServerSpec(name="everything", command=(str(EVERYTHING), "stdio"), **fields)


def time_server(**fields: Any) -> ServerSpec:
    need(TIME)
    return ServerSpec(name="time", command=(str(TIME), "--local-timezone", "UTC"), **fields)


def fetch_server(**fields: Any) -> ServerSpec:
    """Loopback pages are what tests serve, so private addresses are allowed."""
    need(FETCH)
    return ServerSpec(name="fetch", command=(str(FETCH), "--allow-private-ips"), **fields)
