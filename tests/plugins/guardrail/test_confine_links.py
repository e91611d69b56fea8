"""Read-only means confined on disk too: a symlink in the project that leads out (a cloned
repository may ship one) makes a read unconfined, so on the local backend it asks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from seam.plugins.guardrail.classifier import CommandClassifier


@pytest.fixture
def project(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text("secret\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "README").write_text("hello\n")
    (project / "docs").mkdir()
    (project / "link_dir").symlink_to(outside)
    (project / "link_file").symlink_to(outside / "notes.txt")
    (project / "inner").symlink_to(project / "docs")
    return project


@pytest.fixture
def guard() -> CommandClassifier:
    return CommandClassifier(home="/home/me", realpath=os.path.realpath)


@pytest.mark.parametrize(
    "command",
    ["cat link_file", "cat link_dir/notes.txt", "head -n 3 link_dir/*", "grep -r x link_dir"],
)
def test_a_read_through_a_link_that_leaves_is_not_read_only(
    guard: CommandClassifier, project: Path, command: str
) -> None:
    found = guard.classify(command, cwd=str(project))
    assert found.verdict == "safe"  # harmless inside a sandbox, which hides what is outside
    assert not found.read_only


@pytest.mark.parametrize("command", ["cat README", "ls inner", "cat inner/../README", "ls -la"])
def test_reads_that_stay_in_are_read_only(
    guard: CommandClassifier, project: Path, command: str
) -> None:
    assert guard.classify(command, cwd=str(project)).read_only


def test_without_realpath_paths_are_judged_as_written(project: Path) -> None:
    text_only = CommandClassifier(home="/home/me")
    assert text_only.classify("cat link_file", cwd=str(project)).read_only


@pytest.mark.parametrize(
    "command", ["git config --list", "git config --get user.token", "git var -l"]
)
def test_printing_git_configuration_is_not_read_only(
    guard: CommandClassifier, project: Path, command: str
) -> None:
    assert not guard.classify(command, cwd=str(project)).read_only
