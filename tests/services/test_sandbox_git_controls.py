"""Which commands a person's approval may let write `.git/hooks` and `.git/config`."""

from __future__ import annotations

import pytest

from seam.contracts.git_controls import names_git_controls


@pytest.mark.parametrize(
    "command",
    [
        "git config core.editor vi",
        "git -C sub config user.name me",
        "cd x && git remote add origin https://example.org/r.git",
        "git submodule update --init",
        "cp pre-commit .git/hooks/pre-commit",
        "echo '[core]' >> vendor/.git/config",
    ],
)
def test_commands_about_git_controls(command: str) -> None:
    assert names_git_controls(command)


@pytest.mark.parametrize(
    "command",
    ["git status", "git commit -m config", "cat .gitconfig", "ls .github/hooks", "legit config"],
)
def test_other_commands(command: str) -> None:
    assert not names_git_controls(command)
