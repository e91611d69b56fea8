"""Registers `patch`, `web_fetch`, `todo` and `clarify`.

Each is one shared instance: a tool's `run` receives the session's `ToolContext`, so
`todo` keys its list by `ctx.session_key` and `clarify` passes it to `ask`; per-session
state lives in the injected store, not in per-session tool objects.
"""

from __future__ import annotations

from collections.abc import Collection

from seam.contracts.tools import ToolRegistry
from seam.plugins.tools.clarify import Ask, Clarify
from seam.plugins.tools.patch import Patch
from seam.plugins.tools.todo import Todo, TodoBackend
from seam.plugins.tools.web import WebFetch


def register_extra_tools(
    registry: ToolRegistry,
    *,
    todo_store: TodoBackend | None = None,
    ask: Ask | None = None,
    web_allow_private: bool = False,
    web_allowed: Collection[str] = (),
) -> None:
    """`web_allowed`: the non-public hosts, addresses or networks `web_fetch` may reach
    (`[network] allow_private`); `web_allow_private` lets it reach them all."""
    registry.register_tool(Patch())
    registry.register_tool(WebFetch(allow_private=web_allow_private, allowed_hosts=web_allowed))
    registry.register_tool(Todo(todo_store))
    registry.register_tool(Clarify(ask))
