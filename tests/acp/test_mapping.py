"""The editor's permission answers onto Seam's five, and finish reasons onto stop reasons."""

from __future__ import annotations

import pytest
from acp.schema import AllowedOutcome, DeniedOutcome

from seam.apps.acp.mapping import decision_for, stop_reason


@pytest.mark.parametrize(
    ("option", "decision"),
    [
        ("allow_once", "once"),
        ("allow_always", "always"),
        ("reject_once", "deny"),
        ("reject_always", "always_deny"),
        ("something_else", "deny"),
    ],
)
def test_each_permission_option_maps_to_a_decision(option: str, decision: str) -> None:
    assert decision_for(AllowedOutcome(outcome="selected", option_id=option)) == decision


def test_a_cancelled_request_is_a_denial() -> None:
    assert decision_for(DeniedOutcome(outcome="cancelled")) == "deny"


def test_stop_reasons() -> None:
    assert stop_reason("stop", cancelled=False) == "end_turn"
    assert stop_reason("length", cancelled=False) == "max_tokens"
    assert stop_reason("max_iterations", cancelled=False) == "max_turn_requests"
    assert stop_reason("stop", cancelled=True) == "cancelled"
