"""The model step's spending check: before each model call, ask the loop's `BudgetGate`
(built by wiring from config; None: no limits, and nothing is asked) whether the call may
go ahead. A refusal ends the turn as `budget`, with a `halt` event carrying the message:
not an error (the coordinator settles it without a retry, and no provider's failure is
counted), and no request reaches the provider.

Imported by the model step only when the loop has a gate: nothing here is on the path of
a runtime without limits (`seam run` counts its imports).
"""

from __future__ import annotations

from functools import lru_cache

from seam.contracts.budget import BUDGET_FINISH, NO_LIMITS, BudgetScope
from seam.core.identity import parse_session_storage_key, tenant_key_prefix
from seam.core.turn import Finish, answered_by
from seam.core.turn_deps import ModelDeps, Turn, TurnState


async def budget_refusal(deps: ModelDeps, turn: Turn, state: TurnState) -> TurnState | None:
    """The state that ends the turn when a limit is reached; None: the call may go ahead."""
    gate = deps.budget
    if gate is None:
        return None
    provider, model = answered_by(turn, None)
    personality = turn.personality
    scope = BudgetScope(
        turn.session_key,
        personality.id,
        provider,
        model,
        personality.budget or NO_LIMITS,
        state.usage,
        *names_of(turn.session_key),
    )
    refusal = await gate.check(scope)
    if refusal is None:
        return None
    # The refusal is the turn's result: a chat reply, a cron run's delivery and the
    # page's history say it (it is not stored in the transcript the model reads).
    finish = Finish(BUDGET_FINISH, halt=("budget", refusal.message))
    return state._replace(final_text=refusal.message, step=finish)


@lru_cache(maxsize=4096)
def names_of(session_key: str) -> tuple[str, str]:
    """The session's public name and its tenant's key prefix (a key that is no storage
    key, as in a test's loop: itself, and every session). Kept per key: asked before
    every model call, and a key is JSON to parse."""
    try:
        tenant, _, name = parse_session_storage_key(session_key)
    except ValueError:
        return session_key, ""
    return name, tenant_key_prefix(tenant)


__all__ = ["budget_refusal", "names_of"]
