"""MCP resources for the model: `mcp__resources` lists them, `mcp__read_resource` reads one.

Two tools for every server rather than two per server: the list names each resource's
server and URI, and the read takes both back, so the tool list does not grow with the
number of servers. They are offered when a started server declared the resources
capability. Reading is what resources are for (`resources/read` changes nothing), so
neither tool asks for approval; what a resource says is another process's content, and
it reaches the model the way every tool result does, through the loop's hooks (the
injection guard marks it when it reads like instructions). Text is cut at `MAX_CHARS`;
an image resource is attached for a model that sees images (content.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from seam.contracts.tools import ForeignSchema, ToolContext, ToolError, ToolOutput
from seam.plugins.mcp.connection import ServerConnection, ServerError
from seam.plugins.mcp.content import resource

LIST_NAME = "mcp__resources"
READ_NAME = "mcp__read_resource"
MAX_LISTED = 200  # resources per server in one listing
MAX_CHARS = 100_000  # characters of one read
PAGES = 10

Connections = Callable[[], Mapping[str, ServerConnection]]


class ListResources:
    """`mcp__resources`: each server's resources (and URI templates) with their URIs."""

    name = LIST_NAME
    description = (
        "List the resources (documents, files, records) that MCP servers offer: each"
        " line gives the server, the URI to pass to mcp__read_resource, and what it is."
    )
    parameters: Mapping[str, Any] = ForeignSchema(
        {
            "type": "object",
            "properties": {"server": {"type": "string", "description": "only this server"}},
        }
    )
    concurrent = True
    idempotent = True

    def __init__(self, connections: Connections) -> None:
        self._connections = connections

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        chosen = _servers(self._connections(), args.get("server"))
        lines: list[str] = []
        for conn in chosen:
            try:
                lines += await _listing(conn)
            except ServerError as exc:
                lines.append(f"{conn.spec.name}: error: {exc}")
        return "\n".join(lines) or "no MCP server offers resources"


class ReadResource:
    """`mcp__read_resource`: one resource's contents, by server and URI."""

    name = READ_NAME
    description = (
        "Read one resource of an MCP server, by the server's name and the resource's URI"
        " (from mcp__resources, or a URI template filled in)."
    )
    parameters: Mapping[str, Any] = ForeignSchema(
        {
            "type": "object",
            "properties": {"server": {"type": "string"}, "uri": {"type": "string"}},
            "required": ["server", "uri"],
        }
    )
    concurrent = True
    idempotent = True

    def __init__(self, connections: Connections) -> None:
        self._connections = connections

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        [conn] = _servers(self._connections(), str(args["server"]))
        uri = str(args["uri"])
        try:
            result = await conn.request(uri, lambda client: client.read_resource(uri))
        except ServerError as exc:
            raise ToolError(f"MCP server {conn.spec.name!r}: {exc}") from None
        images: list[Any] = []
        parts = [resource(item, images) for item in result.contents]
        text = "\n".join(parts) or f"[resource {uri} is empty]"
        if len(text) > MAX_CHARS:
            text = text[:MAX_CHARS] + f"\n[cut at {MAX_CHARS:,} characters of {len(text):,}]"
        return ToolOutput(text, tuple(images))


def _servers(connections: Mapping[str, ServerConnection], name: Any) -> list[ServerConnection]:
    """The started servers with resources, or the one named (a ToolError naming the
    choices when it is not one of them)."""
    offering = [c for _, c in sorted(connections.items()) if c.resources]
    if name is None or name == "":
        return offering
    for conn in offering:
        if conn.spec.name == name:
            return [conn]
    names = ", ".join(c.spec.name for c in offering) or "none"
    raise ToolError(f"no MCP server {name!r} with resources (servers with resources: {names})")


async def _listing(conn: ServerConnection) -> list[str]:
    server = conn.spec.name
    found = await _pages(conn, "resources/list", "resources")
    templates = await _pages(conn, "resources/templates/list", "resource_templates")
    lines = [
        _line(server, item.uri, item.name, item.mime_type, item.description)
        for item in found[:MAX_LISTED]
    ]
    if len(found) > MAX_LISTED:
        lines.append(f"{server}: {len(found) - MAX_LISTED} more not listed")
    lines += [
        _line(server, item.uri_template, item.name, item.mime_type, item.description)
        + " (a template: fill in the {…} parts)"
        for item in templates[:MAX_LISTED]
    ]
    return lines


async def _pages(conn: ServerConnection, method: str, field: str) -> Sequence[Any]:
    out: list[Any] = []
    cursor: str | None = None
    for _ in range(PAGES):
        page = await conn.request(method, _lister(field, cursor))
        out.extend(getattr(page, field))
        cursor = page.next_cursor
        if not cursor or len(out) > MAX_LISTED:
            break
    return out


def _lister(field: str, cursor: str | None) -> Callable[[Any], Awaitable[Any]]:
    """The request for one page of `resources` or `resource_templates`."""

    def send(client: Any) -> Awaitable[Any]:
        if field == "resources":
            return client.list_resources(cursor=cursor)  # type: ignore[no-any-return]
        return client.list_resource_templates(cursor=cursor)  # type: ignore[no-any-return]

    return send


def _line(server: str, uri: str, name: str, mime: str | None, about: str | None) -> str:
    line = f"{server}  {uri}  {name}" + (f" ({mime})" if mime else "")
    if about:
        first = about.strip().splitlines()[0] if about.strip() else ""
        line += f": {first[:160]}" if first else ""
    return line


__all__ = ["LIST_NAME", "READ_NAME", "ListResources", "ReadResource"]
