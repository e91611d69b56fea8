"""`McpTool`: one tool of an MCP server, as the model sees it (`mcp__<server>__<tool>`).

A call asks for approval first where the server's `approval` says so (`auto`: unless
the server marks the tool read-only or explicitly not destructive), through the turn's
`Approver`, the machinery the shell tools' gate uses: the person's answer is remembered
for the session (`session`) or for good (`always`, `always_deny`, kept by an injected
store: wiring hands in the one the command guard keeps in `approvals.json`, keyed by the
tool's `mcp__<server>__<tool>` name). MCP servers
run outside any sandbox, so the personality's approval mode "off" does not skip the
question (as the gate does for commands without isolation). While the call runs, the
server's progress notes become the turn's `tool_progress` events and its elicitations
approval-style questions (elicit.py). The result becomes text with images (content.py);
the loop's hooks (the injection guard among them) then see it like any tool's output.
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from seam.contracts.guardrail import APPROVING, ApprovalDecision
from seam.contracts.tool_approval import ask_person
from seam.contracts.tools import ForeignSchema, ToolContext, ToolError
from seam.plugins.mcp.connection import Progress, ServerConnection, ServerError
from seam.plugins.mcp.content import render
from seam.plugins.mcp.elicit import elicit
from seam.plugins.mcp.spec import ServerSpec

log = logging.getLogger("seam.mcp")

PREFIX = "mcp"
NAME_LIMIT = 64  # model APIs accept ^[a-zA-Z0-9_-]{1,64}$
ARGS_SHOWN = 200
PROGRESS_EVERY = 0.25  # seconds between the progress events of one call
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, with characters model APIs refuse replaced by `_`."""
    return _UNSAFE.sub("_", f"{PREFIX}__{server}__{tool}")[:NAME_LIMIT]


def needs_approval(spec: ServerSpec, annotations: Any) -> bool:
    if spec.approval != "auto":
        return spec.approval == "always"
    if annotations is None:
        return True  # MCP's defaults: not read-only, destructive
    if getattr(annotations, "read_only_hint", None) is True:
        return False
    return getattr(annotations, "destructive_hint", None) is not False


class StandingAnswers(Protocol):
    """Where `always` and `always_deny` answers outlive the process (the guard's
    `ApprovalCache` is one); either method may raise when its file cannot be used."""

    def is_denied(self, command: str) -> bool: ...

    def is_approved(self, session_key: str, command: str) -> bool: ...

    def cache(self, session_key: str, command: str, decision: ApprovalDecision) -> None: ...


class Answers:
    """What the person answered for MCP tools: `session` answers in memory, `always` and
    `always_deny` in `standing` when there is one (else for this process only)."""

    def __init__(self, standing: StandingAnswers | None = None) -> None:
        self.standing = standing
        self.session: set[tuple[str, str]] = set()
        self.always: set[str] = set()
        self.never: set[str] = set()

    def remembered(self, session_key: str, name: str) -> str | None:
        """ "always_deny", "approved" or None (ask); raises when the saved answers
        cannot be read."""
        standing = self.standing
        if name in self.never or (standing is not None and standing.is_denied(name)):
            return "always_deny"
        if name in self.always or (session_key, name) in self.session:
            return "approved"
        if standing is not None and standing.is_approved(session_key, name):
            return "approved"
        return None

    def record(self, session_key: str, name: str, answer: ApprovalDecision) -> None:
        if answer == "session":
            self.session.add((session_key, name))
        elif answer in ("always", "always_deny"):
            if self.standing is not None:
                self.standing.cache(session_key, name, answer)
                return
            (self.always if answer == "always" else self.never).add(name)


class McpTool:
    concurrent = True
    idempotent = False

    def __init__(self, connection: ServerConnection, listed: Any, answers: Answers) -> None:
        spec = connection.spec
        self._connection = connection
        self._answers = answers
        self.remote_name: str = listed.name
        self.name = tool_name(spec.name, listed.name)
        self.description: str = (listed.description or listed.title or listed.name).strip()
        schema = lean(dict(listed.input_schema or {}))
        schema.setdefault("type", "object")
        self.parameters: Mapping[str, Any] = ForeignSchema(schema)
        self.annotations = listed.annotations
        self.asks = needs_approval(spec, listed.annotations)
        if listed.annotations is not None and listed.annotations.idempotent_hint is True:
            self.idempotent = True

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        if self.asks:
            await self._approve(args, ctx)
        server = self._connection.spec.name
        progress = progress_reporter(ctx.progress)

        async def ask(params: Any) -> Any:
            return await elicit(ctx, server, self.name, params)

        try:
            result = await self._connection.call(
                self.remote_name, dict(args), progress=progress, ask=ask, session=ctx.session_key
            )
        except ServerError as exc:
            raise ToolError(f"MCP server {self._connection.spec.name!r}: {exc}") from None
        text = render(result)
        if getattr(result, "is_error", False):
            raise ToolError(str(text) or f"{self.remote_name} failed")
        return text

    async def _approve(self, args: Mapping[str, Any], ctx: ToolContext) -> None:
        server = self._connection.spec.name
        try:
            remembered = self._answers.remembered(ctx.session_key, self.name)
        except Exception as exc:  # a damaged approvals file: ask nobody, run nothing
            raise ToolError(f"refused: saved approvals cannot be read: {exc}") from None
        if remembered == "always_deny":
            raise ToolError("refused: the person chose to always deny this tool")
        if remembered is not None:
            return
        shown = json.dumps(dict(args), ensure_ascii=False, sort_keys=True, default=str)
        if len(shown) > ARGS_SHOWN:
            shown = shown[: ARGS_SHOWN - 1] + "…"
        why = (
            f"MCP server {server!r} may change things with {self.remote_name} "
            f"(approval = {self._connection.spec.approval!r})"
        )
        answer = await ask_person(
            ctx,
            tool=self.name,
            command=f"{self.name} {shown}",
            reason=why,
        )
        try:
            self._answers.record(ctx.session_key, self.name, answer)
        except Exception as exc:  # the answer holds for this call; it could not be kept
            log.warning("could not save the answer for %s: %s", self.name, exc)
        if answer not in APPROVING:
            raise ToolError(f"refused: the person denied {self.name}")


def progress_reporter(show: Callable[[str], None]) -> Progress:
    """The SDK's progress callback for one call: each note shown as a line, at most one
    every `PROGRESS_EVERY` seconds (events are stored; a server may send thousands), the
    first and the last always."""
    last = -math.inf

    async def report(done: float, total: float | None, message: str | None) -> None:
        nonlocal last
        now = time.monotonic()
        final = total is not None and done >= total
        if final or now - last >= PROGRESS_EVERY:
            last = now
            show(progress_line(done, total, message))

    return report


def progress_line(done: float, total: float | None, message: str | None) -> str:
    """A server's progress note as one line: "3/5", "40%" or "3" (then its message)."""
    line = f"{done:g}"
    if total:
        line = f"{done:g}/{total:g}" if total != 1 else f"{done * 100:.0f}%"
    return f"{line}: {message}" if message else line


# Schema keywords keyed by names (property names, definitions), not by keywords.
_NAMED = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def lean(schema: Any, named: bool = False) -> Any:
    """The schema without `title` annotations (pydantic adds one to every property:
    tokens in every request that tell the model nothing the name does not); validation
    is unchanged. Inside `properties` the keys are argument names and are all kept."""
    if isinstance(schema, dict):
        return {
            key: lean(value, key in _NAMED and not named)
            for key, value in schema.items()
            if named or not (key == "title" and isinstance(value, str))
        }
    if isinstance(schema, list):
        return [lean(item) for item in schema]
    return schema
