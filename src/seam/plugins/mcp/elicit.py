"""A server's elicitation (`elicitation/create`) as an approval-style question.

MCP lets a server ask the person for input in the middle of a tool call. Seam's surfaces
already have one way to put a question to a person that every one of them can answer
(the CLI, the page, the gateways, ACP): the tool approval (`ask_person`). So an
elicitation becomes that question: "MCP server X asks: <message>", with what Seam would
send. Approving accepts, sending the form's default values (a yes/no question cannot
carry typed answers; a required yes/no field without a default is the confirmation
itself and is sent as true); denying declines. A URL elicitation shows the URL and
accepts when approved (the person opens it). When nobody can be asked (a cron job, `seam
run` without a terminal), when nobody answers in time, or when the form needs a value
that a yes/no question cannot give (a required name or number without a default), the
server is told "decline": it never gets an answer nobody gave.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from seam.contracts.guardrail import APPROVING
from seam.contracts.tool_approval import ask_person
from seam.contracts.tools import ToolContext, ToolError

log = logging.getLogger("seam.mcp")

SHOWN = 300  # characters of the values shown in the question


async def elicit(ctx: ToolContext, server: str, tool: str, params: Any) -> Any:
    """The `ElicitResult` for `params` (form or URL mode), asked of `ctx`'s person."""
    from mcp.types import ElicitResult

    message = str(getattr(params, "message", "") or "").strip()
    if getattr(params, "mode", "form") == "url":
        content: dict[str, Any] | None = None
        command = f"open {params.url}"
    else:
        schema = getattr(params, "requested_schema", None) or {}
        content, missing = form_defaults(_plain(schema))
        if missing:
            log.info("%s asked for %s, which a yes/no question cannot give", server, missing)
            ctx.progress(
                f"{server} asked for {', '.join(missing)}; Seam cannot ask for typed values,"
                " so it declined"
            )
            return ElicitResult(action="decline")
        command = "send " + _shown(content) if content else "confirm"
    try:
        answer = await ask_person(
            ctx,
            tool=tool,
            command=command,
            reason=f"MCP server {server!r} asks: {message or '(no message)'}",
        )
    except ToolError as exc:  # nobody there, or no answer in time
        log.info("elicitation from %s declined: %s", server, exc)
        return ElicitResult(action="decline")
    if answer not in APPROVING:
        return ElicitResult(action="decline")
    return ElicitResult(action="accept", content=content)


def form_defaults(schema: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """What approving sends for a form schema: each field's default, a required boolean
    without one as true; and the required fields that no yes/no answer can fill."""
    properties = schema.get("properties")
    fields: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    content: dict[str, Any] = {}
    missing: list[str] = []
    for name, field in fields.items():
        spec = field if isinstance(field, Mapping) else {}
        if "default" in spec:
            content[name] = spec["default"]
        elif name in needed and spec.get("type") == "boolean":
            content[name] = True
        elif name in needed:
            missing.append(str(name))
    return content, missing


def _plain(schema: Any) -> Mapping[str, Any]:
    """The requested schema as plain JSON (the SDK hands a pydantic model or a dict)."""
    if hasattr(schema, "model_dump"):
        dumped = schema.model_dump(by_alias=True, exclude_none=True)
        return dumped if isinstance(dumped, dict) else {}
    return schema if isinstance(schema, Mapping) else {}


def _shown(content: Mapping[str, Any]) -> str:
    text = json.dumps(dict(content), ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


__all__ = ["elicit", "form_defaults"]
