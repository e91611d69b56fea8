"""Seam's own files are out of every command's reach, however they are spelled."""

from __future__ import annotations

import pytest

from seam.plugins.guardrail.classifier import CommandClassifier

STORE = "/srv/seam/store.db"
GUARD = CommandClassifier(home="/home/me", protected=["/home/me/.seam", STORE, f"{STORE}-wal"])


@pytest.mark.parametrize(
    "command",
    [
        "cat /home/me/.seam/approvals.json",
        "cat ~/.seam/approvals.json",
        "cat $HOME/.seam/config.toml",
        "cat ${HOME}/.seam/config.toml",
        "echo '{}' > $SEAM_HOME/approvals.json",
        "cat ~/.s?am/approvals.json",
        "cat /home/me/.[s]eam/config.toml",
        "cat ~/.s''eam/config.toml",
        "d=~/.se; cat ${d}am/approvals.json",
        'cat "$(echo ~/.seam)/approvals.json"',
        "cd ~/.seam && cat approvals.json",
        "cd ~ && cat .seam/approvals.json",
        "cat .seam/approvals.json",  # where it starts is unknown: the name is enough
        "python3 -c \"open('/home/me/.seam/approvals.json', 'w')\"",
        "sqlite3 /srv/seam/store.db 'DELETE FROM messages'",
        "cp /dev/null /srv/seam/store.db-wal",
        "ln -s ~/.seam here",
        "bash -c 'echo x >> ~/.seam/personalities/default/SOUL.md'",
        "find . -exec cp {} ~/.seam/ \\;",
        "cat < ~/.seam/config.toml",
    ],
)
def test_naming_a_protected_path_is_forbidden(command: str) -> None:
    found = GUARD.classify(command)
    assert (found.verdict, found.rule) == ("forbidden", "floor:seam-home"), found


def test_relative_paths_are_judged_from_the_working_directory() -> None:
    assert GUARD.classify("cat approvals.json", cwd="/home/me/.seam").verdict == "forbidden"
    assert GUARD.classify("cat ../.seam/config.toml", cwd="/home/me/src").verdict == "forbidden"
    assert GUARD.classify("cat approvals.json", cwd="/home/me/src").verdict == "safe"


@pytest.mark.parametrize("command", ["grep -r token ~", "find ~ -name '*.json'", "du -a /home"])
def test_walking_a_tree_that_holds_them_needs_approval(command: str) -> None:
    found = GUARD.classify(command)
    assert (found.verdict, found.rule) == ("needs_approval", "protected:ancestor"), found


@pytest.mark.parametrize(
    "command",
    [
        "ls ~",
        "cat ~/.seam2/x",
        "cat ~/notes/.seamless",
        "cat > notes.md <<EOF\nSeam keeps its config in ~/.seam/config.toml.\nEOF",
        "grep -r token src/",
    ],
)
def test_nearby_paths_are_not_protected(command: str) -> None:
    found = GUARD.classify(command)
    assert found.verdict == "safe" or found.rule == "allow:changes-files", found


@pytest.mark.parametrize(
    "command",
    [
        "python3 -c 'print(6 * 7)'",  # a `*` inside code is no glob
        "ls ~/*",  # a shell `*` never matches a leading dot
        "ls *",
        "echo '*'",
    ],
)
def test_a_glob_that_cannot_match_a_dot_name_does_not_reach_the_home(command: str) -> None:
    found = GUARD.classify(command, cwd="/home/me")
    assert found.rule != "floor:seam-home", found


@pytest.mark.parametrize("command", ["cat ~/.se*/config.toml", "cat .s*/config.toml"])
def test_a_glob_with_a_leading_dot_reaches_the_home(command: str) -> None:
    found = GUARD.classify(command, cwd="/home/me")
    assert (found.verdict, found.rule) == ("forbidden", "floor:seam-home"), found
