"""What every `[gateway.<platform>]` table's model shares: unknown keys are refused, and
`allow = [123456789]` (ids written as numbers) means the same as the quoted form."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class ChatSection(BaseModel):
    """A platform's table; subclasses declare their keys (and an `allow` list, validated
    with `ids_as_text`)."""

    model_config = ConfigDict(extra="forbid")


def ids_as_text(value: Any) -> Any:
    """`allow = [123456789]` (numbers, as ids are) is as good as the quoted form."""
    if isinstance(value, list):
        return [str(item) if isinstance(item, int) else item for item in value]
    return value
