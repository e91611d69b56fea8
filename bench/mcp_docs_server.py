"""A five-tool MCP server (a small wiki) for `bench/prompt_overhead.py`: typical names,
one-line descriptions and argument schemas as the SDK generates them from type hints."""

from __future__ import annotations

from mcp.server import MCPServer
from mcp.types import ToolAnnotations

srv = MCPServer("docs")
READ = ToolAnnotations(readOnlyHint=True)


@srv.tool(annotations=READ)
def search(query: str, limit: int = 10) -> list[str]:
    """Search the pages; returns matching titles, best first."""
    return []


@srv.tool(annotations=READ)
def read_page(title: str) -> str:
    """The text of one page."""
    return ""


@srv.tool(annotations=READ)
def list_pages(prefix: str = "") -> list[str]:
    """Titles of the pages whose title starts with `prefix`."""
    return []


@srv.tool()
def write_page(title: str, text: str) -> str:
    """Create a page or replace its text."""
    return title


@srv.tool(annotations=ToolAnnotations(destructiveHint=True))
def delete_page(title: str) -> str:
    """Delete a page for good."""
    return title


if __name__ == "__main__":
    srv.run("stdio")
