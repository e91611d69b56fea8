"""ApprovalCache on a real file: sessions in memory, always/always-deny on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seam.plugins.guardrail.approvals import ApprovalCache, ApprovalFileError

CMD = "rm -rf build"


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "home" / "approvals.json"


def test_a_session_approval_covers_that_session_only_and_is_not_saved(path: Path) -> None:
    cache = ApprovalCache(path)
    cache.cache("s1", CMD, "session")

    assert cache.is_approved("s1", CMD)
    assert cache.consume("s1", CMD) == "session"
    assert cache.consume("s1", CMD) == "session"  # not used up
    assert cache.consume("s2", CMD) is None
    assert cache.consume("s1", "rm -rf dist") is None
    assert not path.exists()
    assert ApprovalCache(path).consume("s1", CMD) is None


def test_a_once_grant_is_used_up_by_one_call(path: Path) -> None:
    cache = ApprovalCache(path)
    cache.cache("s", CMD, "once")
    assert cache.is_approved("s", CMD)
    assert cache.consume("s", CMD) == "once"
    assert cache.consume("s", CMD) is None
    cache.cache("s", CMD, "once")
    cache.cache("s", CMD, "deny")  # withdrawn before it was used
    assert cache.consume("s", CMD) is None


def test_always_is_saved_and_seen_by_a_new_instance(path: Path) -> None:
    ApprovalCache(path).cache("s1", CMD, "always")

    assert json.loads(path.read_text()) == {"version": 1, "always": [CMD], "always_deny": []}
    fresh = ApprovalCache(path)
    assert fresh.consume("another-session", CMD) == "always"
    assert fresh.is_approved("another-session", CMD)


def test_always_deny_is_remembered_and_checked_first(path: Path) -> None:
    cache = ApprovalCache(path)
    cache.cache("s", CMD, "session")
    cache.cache("s", CMD, "once")
    cache.cache("s", CMD, "always_deny")

    assert cache.is_denied(CMD)
    assert not cache.is_approved("s", CMD)
    assert cache.consume("s", CMD) == "always_deny"
    fresh = ApprovalCache(path)
    assert fresh.consume("s2", CMD) == "always_deny"
    fresh.cache("s2", CMD, "always")  # the person changed their mind
    assert not fresh.is_denied(CMD)
    assert ApprovalCache(path).consume("s3", CMD) == "always"


def test_a_change_by_another_process_is_seen(path: Path) -> None:
    first = ApprovalCache(path)
    second = ApprovalCache(path)
    second.cache("s", CMD, "always_deny")
    assert first.is_denied(CMD)
    first.cache("s", "git push -f", "always")  # merged, not overwriting the deny
    data = json.loads(path.read_text())
    assert data["always_deny"] == [CMD] and data["always"] == ["git push -f"]
    path.unlink()  # the person cleared it
    assert not first.is_denied(CMD)


def test_each_write_is_atomic_and_keeps_the_previous_version(path: Path) -> None:
    cache = ApprovalCache(path)
    cache.cache("s", "a", "always")
    cache.cache("s", "b", "always")

    backup = path.with_name("approvals.json.bak")
    assert json.loads(backup.read_text())["always"] == ["a"]
    assert json.loads(path.read_text())["always"] == ["a", "b"]
    assert sorted(p.name for p in path.parent.iterdir()) == ["approvals.json", "approvals.json.bak"]


@pytest.mark.parametrize(
    "text",
    ["{not json", "[]", '{"version": 2, "always": []}', '{"version": 1, "always": "rm"}'],
)
def test_a_corrupt_file_is_named_and_never_overwritten(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True)
    path.write_text(text)

    with pytest.raises(ApprovalFileError) as raised:
        ApprovalCache(path)
    assert str(path) in str(raised.value) and "left untouched" in str(raised.value)
    assert path.read_text() == text


def test_corruption_while_running_stops_writes(path: Path) -> None:
    cache = ApprovalCache(path)
    cache.cache("s", "a", "always")
    path.write_text("{broken")

    with pytest.raises(ApprovalFileError, match="not valid JSON"):
        cache.cache("s", "b", "always")
    with pytest.raises(ApprovalFileError):
        cache.is_denied("a")
    assert path.read_text() == "{broken"


def test_forgetting_a_session_drops_its_approvals(path: Path) -> None:
    cache = ApprovalCache(path)
    cache.cache("s", CMD, "session")
    cache.cache("s", "ls", "once")
    cache.forget_session("s")
    assert cache.consume("s", CMD) is None and cache.consume("s", "ls") is None


def test_an_unknown_decision_is_refused(path: Path) -> None:
    with pytest.raises(ValueError, match="unknown approval decision 'maybe'"):
        ApprovalCache(path).cache("s", CMD, "maybe")  # type: ignore[arg-type]
