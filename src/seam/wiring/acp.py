"""What `seam acp` is built from: the configured runtime over the storage the surface
hands in (`apps/acp/storage.py` wraps the real filesystem so files can go through the
editor), the editor's MCP servers offered like configured ones, and the models a session
may be switched to (the main one, then those the personalities and fallbacks name), each
session's choice applied to its turns' personality.

The ACP surface (apps/acp) speaks the protocol and decides; this module only builds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from seam.contracts.personality import Personality
from seam.contracts.storage import Storage
from seam.wiring.configure import create_runtime
from seam.wiring.runtime import Runtime
from seam.wiring.settings import ConfigError, load_settings

if TYPE_CHECKING:
    from seam.plugins.mcp.servers import McpServers


def file_storage() -> Storage:
    """The real filesystem, as every session's files are opened (beneath the reach root)."""
    from seam.services.storage.fs import FsStorage

    return FsStorage()


def create_acp_runtime(
    storage: Storage, model: str | None = None, *, tenant: str | None = None
) -> Runtime:
    """The configured runtime over `storage`, interactive (an editor is there to approve);
    `tenant`: whose sessions it names (None: the owner's); use it as `async with`."""
    settings = load_settings(model=model)
    if tenant is None:
        return create_runtime(settings=settings, storage=storage, interactive=True)
    return create_runtime(settings=settings, storage=storage, interactive=True, tenant_id=tenant)


@dataclass(frozen=True, slots=True)
class EditorServer:
    """An MCP server the editor passed in `session/new` (stdio or HTTP)."""

    name: str
    command: Sequence[str] = ()
    url: str = ""
    env: Mapping[str, str] | None = None
    headers: Mapping[str, str] | None = None


async def add_mcp_servers(
    runtime: Runtime, servers: Sequence[EditorServer], cwd: str | None = None
) -> list[str]:
    """Offer the editor's MCP servers like configured ones (started on first use, a
    stdio one in `cwd`, the session's project); returns their names."""
    if not servers:
        return []
    from seam.plugins.mcp.spec import ServerSpec

    mcp = _editor_mcp(runtime)
    settings = runtime.settings
    allow = tuple(settings.config.network.allow_private) if settings is not None else ()
    names = []
    for server in servers:
        spec = ServerSpec(
            name=_server_name(server.name),
            command=tuple(server.command),
            url=server.url,
            env=dict(server.env or {}),
            headers=dict(server.headers or {}),
            cwd=cwd,
            allow_private=allow,
        )
        await mcp.add(spec)
        names.append(spec.name)
    return names


def _editor_mcp(runtime: Runtime) -> McpServers:
    """The runtime's MCP set, built when none was configured, with the default
    personality given every MCP tool."""
    from seam.wiring.default_tools import DefaultGets
    from seam.wiring.mcp import MCP_TOOLS, build_mcp, default_gets_mcp

    if runtime.mcp is None:
        # None configured and a tool registry handed in: give it a set (closed with the runtime).
        runtime.mcp = build_mcp(runtime.settings, configured=False)
        add_source = getattr(runtime.tools, "add_source", None)
        if add_source is not None:
            add_source(runtime.mcp)
    current = runtime.loop.personalities
    if not (isinstance(current, DefaultGets) and MCP_TOOLS in current.names):
        # The default personality gets every MCP tool; it was not wrapped at start-up when
        # no server was configured.
        runtime.loop.personalities = default_gets_mcp(current)
        runtime.personalities = runtime.loop.personalities
    return runtime.mcp


def model_choices(runtime: Runtime) -> list[str]:
    """The models an editor may pick for a session, as `kind:model` refs: the main model
    first (what a session uses until one is picked), then each model a personality or the
    fallback chain names. Empty without settings (a runtime built in a test)."""
    from seam.wiring.models import ModelFactory, parse_ref

    settings = runtime.settings
    if settings is None:
        return []
    kind = settings.provider
    main = ModelFactory(settings).default_model_name(kind)
    refs = [f"{kind}:{main}" if main else kind]
    named = list(settings.config.model.fallback)
    try:
        for personality in runtime.personalities.list():
            named += [r for r in (personality.model, *personality.fallback) if r]
    except Exception:  # a broken personality file: `seam doctor` names it
        pass
    for ref in named:
        try:
            found, model = parse_ref(ref, kind)
        except ConfigError:
            continue
        full = f"{found}:{model}" if model else found
        if full not in refs:
            refs.append(full)
    return refs


def use_session_models(runtime: Runtime, chosen: Mapping[str, str]) -> None:
    """Run each session in `chosen` (session key -> model ref, read at each turn) on its
    model, over whatever personality overlay the runtime already has (tenants')."""
    loop = runtime.loop
    inner = loop.personality_overlay

    def overlay(key: str, personality: Personality) -> Personality:
        found = personality if inner is None else inner(key, personality)
        ref = chosen.get(key)
        return found if ref is None else replace(found, model=ref)

    loop.personality_overlay = overlay


def _server_name(name: str) -> str:
    """A tool-name-safe server name (`mcp__<server>__<tool>`)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_") or "editor"


__all__ = [
    "EditorServer",
    "add_mcp_servers",
    "create_acp_runtime",
    "file_storage",
    "model_choices",
    "use_session_models",
]
