"""An OpenAI-style request's `messages` as transcript messages: what a stateless request
seeds its one-off session with."""

from __future__ import annotations

from typing import Any

from seam.contracts.messages import Message


def transcript_messages(items: list[dict[str, Any]]) -> list[Message]:
    """OpenAI-style `messages` as transcript messages (text only)."""
    out = []
    for item in items:
        role = item.get("role")
        content = item.get("content") or ""
        if isinstance(content, list):
            # Only text parts with string text (`{"text": 5}` was a 500, found by fuzzing).
            content = "".join(
                part["text"]
                for part in content
                if isinstance(part, dict) and isinstance(part.get("text"), str)
            )
        if role == "developer":
            role = "system"
        if role not in ("system", "user", "assistant"):
            continue
        out.append(Message(role=role, content=str(content)))
    return out


__all__ = ["transcript_messages"]
