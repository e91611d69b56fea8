from __future__ import annotations

import pytest

from seam.contracts import Classification
from seam.core import ScriptedModel, error_step, text_step
from seam.wiring.judge import model_judge

FLAGGED = Classification("needs_approval", "pattern:rm-recursive", "recursive delete", "rm -r b")


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("APPROVE", "approve"),
        ("Deny.", "deny"),
        ("ASK", "ask"),
        ("Well, maybe", "ask"),
        ("", "ask"),
    ],
)
async def test_the_judge_reads_one_word(reply: str, verdict: str) -> None:
    model = ScriptedModel([text_step(reply)])
    assert await model_judge(model)("rm -r build", FLAGGED) == verdict
    request = model.requests[0]
    assert "rm -r build" in request.messages[0].content and request.max_tokens == 4


async def test_a_failing_model_raises_so_the_gate_asks() -> None:
    with pytest.raises(Exception, match="scripted failure"):
        await model_judge(ScriptedModel([error_step("retryable")]))("rm -r b", FLAGGED)
