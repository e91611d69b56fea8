"""Tools are factories over a `ToolContext`: each session builds its own toolset.

A static tool is registered as a context-free factory; a tool that needs the session's
storage, sandbox or chat binding closes over the context it is built with. That way two
sessions with different working directories or sandboxes never share a tool instance.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from seam.contracts.guardrail import ApprovalMode, Approver, CommandGate
from seam.contracts.memory import MemoryProvider
from seam.contracts.messages import ImagePart
from seam.contracts.model import ToolDefinition
from seam.contracts.sandbox import Sandbox
from seam.contracts.storage import Storage


class ToolError(Exception):
    """Raised by a tool for a failure the model should read and may recover from."""


class CancelToken:
    """Cooperative cancellation shared by a turn and the tools it runs.

    Deliberately tiny and synchronous: checking it is one attribute read on the hot path.
    """

    __slots__ = ("_callbacks", "cancelled", "reason")

    def __init__(self) -> None:
        # A plain attribute, not a property: read once per streamed chunk. Set via cancel().
        self.cancelled = False
        self._callbacks: list[Callable[[], None]] = []
        self.reason = ""

    def cancel(self, reason: str = "cancelled") -> None:
        if self.cancelled:
            return
        self.cancelled = True
        self.reason = reason
        for callback in self._callbacks:
            callback()
        self._callbacks.clear()

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` once on cancel; returns a function that unregisters it."""
        if self.cancelled:
            callback()
            return _nothing
        self._callbacks.append(callback)

        def unregister() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return unregister


def _nothing() -> None:
    return None


def _no_progress(message: str) -> None:
    return None


@dataclass(frozen=True, slots=True)
class ChildSetup:
    """How a child session differs from its factory's defaults, one object for
    `Subagents.delegate`, its implementation and `SessionFactory.create_child`: the
    personality it runs as and the tools it may use (None: the defaults)."""

    personality: str | None = None
    tools: Sequence[str] | None = None


AS_DEFAULTS = ChildSetup()


class Subagents(Protocol):
    """What a session offers its tools for running other sessions (`delegate_task`,
    `workflow`): child sessions built by the same factory, one level deeper."""

    @property
    def depth(self) -> int:
        """0 for a root session; a child's depth is its parent's plus one."""
        ...

    @property
    def max_depth(self) -> int: ...

    async def delegate(self, task: str, *, task_id: str, setup: ChildSetup = AS_DEFAULTS) -> str:
        """Run `task` in a child session and return its final answer."""
        ...

    def workflow_names(self) -> list[str]: ...

    async def run_workflow(self, name: str, input: str, *, run_id: str) -> str:
        """Run a registered workflow; its nodes are child sessions. Returns its output."""
        ...


@dataclass(frozen=True, slots=True)
class ToolContext:
    session_key: str
    storage: Storage
    working_dir: str = "."
    personality_id: str = ""
    turn_id: str = ""
    memory: MemoryProvider | None = None
    # The id of the call being run (set per call by the loop).
    call_id: str = ""
    sandbox: Sandbox | None = None
    gate: CommandGate | None = None
    # Bridges an approval request to whoever consumes the turn's events.
    approvals: Approver | None = None
    approval_mode: ApprovalMode = "manual"
    # A platform binding (chat gateways); typed loosely until that contract lands.
    chat: Any = None
    # Child sessions (None where the session cannot spawn any).
    subagents: Subagents | None = None
    cancel: CancelToken = field(default_factory=CancelToken)
    progress: Callable[[str], None] = _no_progress
    # What the loop redacts stored text with; a tool that writes command output to a file
    # itself (a spilled log) applies it too. None: nothing to redact with.
    redact: Callable[[str], str] | None = None


class ToolOutput(str):
    """A tool's result text carrying images: what `Tool.run` may return instead of a plain
    `str` when it has pictures for the model. The loop reads `images` before its hooks
    see the text (which holds a placeholder for each image) and attaches them to the tool
    message; a provider whose model cannot see images sends the text alone."""

    images: tuple[ImagePart, ...]

    def __new__(cls, text: str, images: tuple[ImagePart, ...] = ()) -> ToolOutput:
        made = super().__new__(cls, text)
        made.images = images
        return made


@runtime_checkable
class Tool(Protocol):
    """One callable capability offered to the model.

    `concurrent`: may run alongside other calls of the same model step.
    `idempotent`: safe to run again after a crash left its outcome unknown.
    """

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def parameters(self) -> Mapping[str, Any]: ...

    @property
    def concurrent(self) -> bool: ...

    @property
    def idempotent(self) -> bool: ...

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str: ...


def object_schema(properties: Mapping[str, Any], *required: str) -> Mapping[str, Any]:
    """The JSON Schema of a tool's arguments: an object of `properties`, the `required`
    ones named, no others allowed. One place for the frame every built-in tool shares, so
    a tool declares only its own arguments."""
    schema: dict[str, Any] = {"type": "object", "properties": dict(properties)}
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = False
    return schema


def plain_json(value: Any) -> Any:
    """`json.dumps`'s `default` for tool schemas: ones built from tuples, sets or
    read-only mappings still serialise as JSON (lists and objects)."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"not JSON: {type(value).__name__}")


# None: the tool is not offered in this context (skill tools where no skill is found).
ToolFactory = Callable[[ToolContext], Tool | None]


class ArgumentError(ValueError):
    """Arguments that break their tool's schema; the message names the argument and what
    was wrong ("'offset' must be >= 1 (got 0)") and is meant for the model."""


class ArgumentValidator(Protocol):
    """Checks a call's arguments against its tool's JSON Schema before the tool runs.

    One validator serves every tool, so "a required string" means the same everywhere and
    a tool's code can rely on what its `parameters` declare.
    """

    def validate(self, schema: Mapping[str, Any], args: Mapping[str, Any]) -> Mapping[str, Any]:
        """The arguments to run the tool with: `args` itself, or a copy where a quoted
        scalar ("12", "true") became the number or boolean the schema asks for (small
        models often quote them). Raises `ArgumentError` when they break `schema`, and
        ValueError when `schema` itself is not a usable JSON Schema."""
        ...


class ForeignSchema(dict[str, Any]):
    """A JSON Schema that came from outside the process (an MCP server's `inputSchema`).

    Validators must interpret it, never compile it into code: a schema-to-Python compiler
    (fastjsonschema) would turn a hostile server's schema into code run in this process.
    """


class ToolSource(Protocol):
    """Tools whose names are known only once something outside answers (MCP servers).

    `prepare` is awaited before a toolset is built, with the names (or patterns) it asks
    for; it learns the tools it must (starting what it must) and never raises: a source
    that cannot answer offers no tools this turn. `factories` is what it knows now.
    """

    def factories(self) -> Mapping[str, ToolFactory]: ...

    async def prepare(self, names: Sequence[str] | None) -> None: ...


class ToolRegistry(Protocol):
    def register(self, name: str, factory: ToolFactory) -> None: ...

    def register_tool(self, tool: Tool) -> None: ...

    def names(self) -> list[str]: ...

    def build(self, names: Sequence[str] | None, ctx: ToolContext) -> list[Tool]:
        """Build the named tools (all when `names` is None), skipping unknown names; a
        name with glob characters (`mcp__docs__*`) stands for every tool it matches."""
        ...

    def definitions(self, tools: Sequence[Tool]) -> list[ToolDefinition]:
        """Definitions sorted by name, so the request prefix stays byte-stable."""
        ...


def coerce_scalar(text: str, wanted: str) -> int | float | bool | None:
    """A quoted number or boolean as the JSON Schema `wanted` type asks for (small models
    send `"12"` and `"true"`), or None when `text` is no such value. One rule for every
    argument validator, ours and the one for MCP servers' schemas."""
    if wanted == "boolean":
        return {"true": True, "false": False}.get(text.lower())
    if wanted == "integer":
        digits = text[1:] if text[:1] == "-" else text
        return int(text) if digits.isascii() and digits.isdigit() else None
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None
