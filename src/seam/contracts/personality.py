"""Personalities: who the agent is (SOUL.md), which model and tools it uses, what it may touch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from seam.contracts.guardrail import ApprovalMode

if TYPE_CHECKING:
    from seam.contracts.budget import BudgetLimits


@dataclass(frozen=True, slots=True)
class Personality:
    id: str
    soul: str
    name: str = ""
    description: str = ""
    model: str | None = None
    # Provider refs tried in order when the primary fails ("anthropic:claude-haiku-4-5",
    # "openai:gpt-4o-mini", "local"); resolved by wiring.
    fallback: tuple[str, ...] = ()
    # None: every registered tool; () : no tools.
    toolset: tuple[str, ...] | None = None
    # Roots the personality may read / write; "." means the session's working dir.
    fs_read: tuple[str, ...] = (".",)
    fs_write: tuple[str, ...] = (".",)
    # How commands that need approval are decided: ask the person ("manual"), ask a second
    # model call ("smart"; any error means ask), or don't ask ("off").
    approval_mode: ApprovalMode = "manual"
    # Whether commands run by this personality's sandbox may use the network.
    network: bool = False
    # Its own spending limits (`[budget]` in its config.toml; None: none); the tightest
    # limit that applies wins (contracts/budget.py).
    budget: BudgetLimits | None = None


@runtime_checkable
class PersonalityRegistry(Protocol):
    """Read on every turn, so an edit on disk shows in the next turn (hot reload)."""

    @property
    def default_id(self) -> str: ...

    def get(self, personality_id: str) -> Personality:
        """Raises KeyError naming the unknown id."""
        ...

    def list(self) -> list[Personality]: ...
