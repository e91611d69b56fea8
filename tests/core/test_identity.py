from __future__ import annotations

import pytest

from seam.core.identity import (
    InvalidSessionName,
    assert_public_session_name,
    create_session_storage_key,
    create_task_session_name,
    parse_session_storage_key,
)


def test_storage_key_format_is_pinned() -> None:
    assert (
        create_session_storage_key("tenantId", "default", "threadId")
        == 'agent-session:["tenantId","default","threadId"]'
    )


def test_child_names_and_keys() -> None:
    name = create_task_session_name("threadId", "task123")
    assert name == "task:threadId:task123"
    assert (
        create_session_storage_key("tenantId", "default", name)
        == 'agent-session:["tenantId","default","task:threadId:task123"]'
    )


def test_keys_round_trip_even_with_quotes_and_unicode() -> None:
    key = create_session_storage_key("t", "h", 'my "odd" name ✓')
    assert parse_session_storage_key(key) == ("t", "h", 'my "odd" name ✓')


@pytest.mark.parametrize("key", ["plain", 'agent-session:["a"]', "agent-session:{", ""])
def test_parse_rejects_non_keys(key: str) -> None:
    with pytest.raises(ValueError, match="not a session key"):
        parse_session_storage_key(key)


@pytest.mark.parametrize(
    ("name", "message"),
    [("task:x:1", "reserved"), ("", "empty"), ("   ", "empty"), ("a\nb", "control")],
)
def test_public_names_reject_reserved_and_malformed(name: str, message: str) -> None:
    with pytest.raises(InvalidSessionName, match=message):
        assert_public_session_name(name)
