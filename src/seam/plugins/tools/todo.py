"""The `todo` tool: a per-session task list the model keeps for itself.

The list lives in an injected store keyed by session, not in the tool, so it survives
across turns (and tool rebuilds) for as long as the store does: the in-memory default
lasts the process; a persistent store can implement the same two methods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from seam.contracts.tool_spec import SpecTool, ToolSpec, positive_integer
from seam.contracts.tools import ToolContext, ToolError

STATUSES = ("pending", "in_progress", "done")
MAX_ITEMS = 100  # per session: a list longer than this is no longer a plan
MAX_TEXT = 300  # chars per item
_MARKS = {"pending": " ", "in_progress": ">", "done": "x"}


@dataclass(frozen=True, slots=True)
class TodoItem:
    id: int
    text: str
    status: str = "pending"


class TodoBackend(Protocol):
    def get(self, session_key: str) -> tuple[TodoItem, ...]: ...

    def set(self, session_key: str, items: Sequence[TodoItem]) -> None: ...


class TodoStore:
    """In-memory, per process. Tuples in, tuples out: a caller cannot mutate the store."""

    def __init__(self) -> None:
        self._lists: dict[str, tuple[TodoItem, ...]] = {}

    def get(self, session_key: str) -> tuple[TodoItem, ...]:
        return self._lists.get(session_key, ())

    def set(self, session_key: str, items: Sequence[TodoItem]) -> None:
        if items:
            self._lists[session_key] = tuple(items)
        else:
            self._lists.pop(session_key, None)


class Todo(SpecTool):
    spec = ToolSpec(
        name="todo",
        description=(
            "Keep a task list for this session: add items, update an item's status, list, or "
            "clear. Returns the whole list."
        ),
        arguments={
            "action": {"type": "string", "enum": ["add", "update", "list", "clear"]},
            "items": {
                # One task as a plain string is accepted too: small models often send that.
                "type": ["array", "string"],
                "items": {"type": "string"},
                "description": "Tasks to add.",
            },
            "id": positive_integer("Item to update."),
            "status": {"type": "string", "enum": list(STATUSES)},
        },
        required=("action",),
    )

    def __init__(self, store: TodoBackend | None = None) -> None:
        self.store: TodoBackend = store if store is not None else TodoStore()

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        # Types and the action's name are checked against the schema before `run`; which
        # arguments an action needs is checked here.
        action = args["action"]
        key = ctx.session_key
        items = self.store.get(key)
        if action == "add":
            items = _add(items, args.get("items"))
        elif action == "update":
            items = _update(items, args.get("id"), args.get("status"))
        elif action == "clear":
            items = ()
        if action != "list":
            self.store.set(key, items)
        return render(items)


def _add(items: tuple[TodoItem, ...], new: list[str] | str | None) -> tuple[TodoItem, ...]:
    if isinstance(new, str):
        new = [new]
    if not new:
        raise ToolError("action 'add' needs 'items': a non-empty list of task texts")
    texts = []
    for text in new:
        if not text.strip():
            raise ToolError(f"each item must be a non-empty string, not {text!r}")
        texts.append(" ".join(text.split())[:MAX_TEXT])
    if len(items) + len(texts) > MAX_ITEMS:
        raise ToolError(f"the list would exceed {MAX_ITEMS} items; clear finished ones first")
    next_id = max((item.id for item in items), default=0) + 1
    return (*items, *(TodoItem(next_id + i, text) for i, text in enumerate(texts)))


def _update(
    items: tuple[TodoItem, ...], item_id: int | None, status: str | None
) -> tuple[TodoItem, ...]:
    if item_id is None:
        raise ToolError("action 'update' needs 'id': the number of an item in the list")
    if status is None:
        raise ToolError("action 'update' needs 'status': pending, in_progress or done")
    item_id = int(item_id)
    for i, item in enumerate(items):
        if item.id == item_id:
            return (*items[:i], replace(item, status=status), *items[i + 1 :])
    known = ", ".join(str(item.id) for item in items) or "none: the list is empty"
    raise ToolError(f"no todo item {item_id} (ids: {known})")


def render(items: Sequence[TodoItem]) -> str:
    """One line per item, `[x]` done, `[>]` in progress, `[ ]` pending."""
    if not items:
        return "todo list is empty"
    done = sum(item.status == "done" for item in items)
    lines = [f"todo ({done}/{len(items)} done):"]
    lines.extend(f"{item.id}. [{_MARKS[item.status]}] {item.text}" for item in items)
    return "\n".join(lines)
