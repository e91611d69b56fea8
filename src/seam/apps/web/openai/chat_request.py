"""A `/v1/chat/completions` body as an `Asked`: every field honoured, ignored or refused
with a 400 naming it (`fields.py`)."""

from __future__ import annotations

from typing import Any

from seam.apps.web.openai.answer import answer_format
from seam.apps.web.openai.fields import (
    an_object,
    basics,
    client_tools,
    max_tokens,
    sampling,
    stops,
)
from seam.apps.web.openai.fields import tool_choice as choice_of
from seam.apps.web.openai.messages import refuse, transcript_messages
from seam.apps.web.openai.turn import Asked
from seam.contracts.turn_extras import TurnExtras

HONOURED = frozenset(
    {
        "model",
        "messages",
        "stream",
        "stream_options",
        "tools",
        "tool_choice",
        "max_tokens",
        "max_completion_tokens",
        "temperature",
        "stop",
        "response_format",
    }
)


def chat_request(body: Any, own_tools: frozenset[str]) -> Asked:
    """Check the body and reduce it; `own_tools`: names a client tool may not take."""
    model, stream = basics(body, HONOURED)
    messages = body.get("messages")
    if not isinstance(messages, list) or not 1 <= len(messages) <= 10_000:
        raise refuse("messages", "must be a list of 1 to 10000 messages")
    options = an_object(body, "stream_options")
    external = client_tools(body.get("tools"), own_tools, nested=True)
    limit = max_tokens(body, "max_completion_tokens", "max_tokens")
    asked_format = answer_format(body.get("response_format"))
    extras = TurnExtras(
        external=external,
        sampling=sampling(body, limit, choice_of(body.get("tool_choice"))),
        note=None if asked_format is None else asked_format.note(),
    )
    return Asked(
        model=model,
        history=transcript_messages(messages),
        stream=stream,
        extras=extras,
        stops=stops(body.get("stop")),
        format=asked_format,
        usage_wanted=bool(options.get("include_usage")),
    )


__all__ = ["HONOURED", "chat_request"]
