"""The agent loop's collaborators by name, declared once for every place that takes them.

`AgentLoop(model=..., **parts)`, `assemble_runtime(model=..., **parts)` and
`create_runtime(settings, **overrides)` all take these keywords; each signature unpacks
one of these typed dicts instead of restating the list, so a collaborator added here is
one edit and mypy checks every keyword at every call site. A key left out (or None)
means the empty stack's collaborator: what each default is, is said where it is built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, TypedDict, TypeVar

from seam.contracts.context import ContextBuilder, ContextCompressor, TokenEstimator
from seam.contracts.guardrail import CommandGate
from seam.contracts.hooks import HookRegistry
from seam.contracts.memory import MemoryProvider
from seam.contracts.personality import PersonalityRegistry
from seam.contracts.sandbox import SandboxProvider
from seam.contracts.sessions import SessionStore
from seam.contracts.storage import Storage
from seam.contracts.tools import CancelToken, Subagents, ToolRegistry
from seam.contracts.tracing import Tracer
from seam.contracts.turn_extras import TurnExtras
from seam.core.turn_deps import (
    LoopOptions,
    ModelResolver,
    Pricing,
    Redact,
    TranscriptWriter,
)

if TYPE_CHECKING:
    from seam.contracts.budget import BudgetGate

T = TypeVar("T")


class SharedParts(TypedDict, total=False):
    """What the loop, `assemble_runtime` and `create_runtime` all take: the registries,
    stores and guards a turn works with, and the loop's limits and prices."""

    tools: ToolRegistry | None
    hooks: HookRegistry | None
    personalities: PersonalityRegistry | None
    memory: MemoryProvider | None
    sessions: SessionStore | None
    storage: Storage | None
    sandboxes: SandboxProvider | None
    gate: CommandGate | None
    options: LoopOptions | None
    pricing: Pricing | None
    # Spending limits checked before each model call (None: no limits).
    budget: BudgetGate | None


class LoopParts(SharedParts, total=False):
    """`SharedParts` and what the loop (and `assemble_runtime`, which builds it) also
    takes: where sessions work, what no tool may touch, the per-personality model, the
    redaction, the context window's handling, tracing and turn ids."""

    working_dir: str
    fs_deny: Iterable[str]
    models: ModelResolver | None
    redact: Redact | None
    context: ContextBuilder | None
    compressor: ContextCompressor | None
    estimator: TokenEstimator | None
    tracer: Tracer | None
    new_id: Callable[[], str] | None


class RunOptions(TypedDict, total=False):
    """`AgentLoop.run`'s keywords: the personality the turn runs as (None: the session's
    or the default) and its cancel token (None: a fresh one)."""

    personality: str | None
    cancel: CancelToken | None


class SessionTurnOptions(RunOptions, total=False):
    """A session's `run`/`run_from` keywords (the Coordinator's sessions take these):
    `RunOptions` and what writes the turn's transcript (None: the session store)."""

    transcript: TranscriptWriter | None
    # The caller's tools, sampling settings, ... (`contracts/turn_extras.py`).
    extras: TurnExtras


class TurnOptions(SessionTurnOptions, total=False):
    """`AgentLoop.run_from`'s keywords: `SessionTurnOptions` and the session's subagents
    (None: none); a session passes its own."""

    subagents: Subagents | None


def given_or(value: T | None, make: Callable[[], T]) -> T:
    """`value` when one was handed in, else a new default (None, not falsiness, means
    "not given": an empty registry is still the one handed in)."""
    return value if value is not None else make()


def check_keywords(given: Mapping[str, object], accepted: Iterable[str], where: str) -> None:
    """Refuse a keyword none of these typed dicts declares, as a plain signature would
    (a misspelt `tool=` must not silently leave the default in place). Called several
    times a turn: the usual case (every keyword known) builds nothing."""
    if not isinstance(accepted, (frozenset, set)):
        accepted = frozenset(accepted)
    for name in given:
        if name not in accepted:
            unknown = sorted(set(given).difference(accepted))
            raise TypeError(f"{where}() got an unexpected keyword argument {unknown[0]!r}")
