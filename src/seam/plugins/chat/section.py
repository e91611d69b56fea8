"""What every `[gateway.<platform>]` table's model shares: unknown keys are refused, and
`allow = [123456789]` (ids written as numbers) means the same as the quoted form."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


class ChatSection(BaseModel):
    """A platform's table; subclasses declare their keys (and `allow: AllowList`)."""

    model_config = ConfigDict(extra="forbid")


def ids_as_text(value: Any) -> Any:
    """`allow = [123456789]` (numbers, as ids are) is as good as the quoted form."""
    if isinstance(value, list):
        return [str(item) if isinstance(item, int) else item for item in value]
    return value


# The user ids that may talk to the agent without pairing, as text.
AllowList = Annotated[list[str], BeforeValidator(ids_as_text), Field(default_factory=list)]
