"""FilePersonalityRegistry on real folders: hot reload, bad edits, the seeded default."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from seam.contracts.personality import Personality, PersonalityRegistry
from seam.plugins.personalities.files import (
    DEFAULT_SOUL,
    FilePersonalityRegistry,
    write_default_personality,
)
from seam.plugins.tools.files import FILE_TOOLS
from seam.wiring.tools import build_tool_registry

_tick = 1_700_000_000


def put(path: Path, text: str) -> None:
    """Write and give the file a fresh mtime, so a change is visible without sleeping."""
    global _tick
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    _tick += 10
    os.utime(path, (_tick, _tick))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "personalities"


def test_reads_soul_and_config(root: Path) -> None:
    put(root / "coder" / "SOUL.md", "  You write code.\n")
    put(
        root / "coder" / "config.toml",
        'name = "Coder"\ndescription = "Writes code"\nmodel = "local/smol"\n'
        'toolset = ["read_file"]\n[fs_reach]\nread = [".", "/srv/docs"]\nwrite = []\n',
    )
    registry = FilePersonalityRegistry(str(root), default_id="coder")
    assert isinstance(registry, PersonalityRegistry)
    assert registry.default_id == "coder"
    assert registry.get("coder") == Personality(
        id="coder",
        soul="You write code.",
        name="Coder",
        description="Writes code",
        model="local/smol",
        toolset=("read_file",),
        fs_read=(".", "/srv/docs"),
        fs_write=(),
    )


def test_soul_alone_gets_all_tools_and_working_dir_reach(root: Path) -> None:
    put(root / "plain" / "SOUL.md", "Plain.")
    got = FilePersonalityRegistry(str(root)).get("plain")
    assert (got.name, got.model, got.toolset, got.fs_read, got.fs_write) == (
        "plain",
        None,
        None,
        (".",),
        (".",),
    )


def test_edit_to_soul_shows_on_next_get(root: Path) -> None:
    put(root / "default" / "SOUL.md", "Version one.")
    registry = FilePersonalityRegistry(str(root))
    assert registry.get("default").soul == "Version one."
    put(root / "default" / "SOUL.md", "Version two.")
    assert registry.get("default").soul == "Version two."
    put(root / "default" / "config.toml", 'name = "Renamed"\n')
    assert registry.get("default").name == "Renamed"
    (root / "default" / "config.toml").unlink()
    assert registry.get("default").name == "default"


def test_unchanged_files_are_not_reread(root: Path) -> None:
    put(root / "default" / "SOUL.md", "Cached.")
    registry = FilePersonalityRegistry(str(root))
    first = registry.get("default")
    assert registry.get("default") is first


def test_new_folders_appear_and_deleted_ones_vanish(root: Path) -> None:
    put(root / "a" / "SOUL.md", "A.")
    registry = FilePersonalityRegistry(str(root))
    assert [p.id for p in registry.list()] == ["a"]
    put(root / "b" / "SOUL.md", "B.")
    assert [p.id for p in registry.list()] == ["a", "b"]
    assert registry.get("b").soul == "B."
    (root / "a" / "SOUL.md").unlink()
    (root / "a").rmdir()
    assert [p.id for p in registry.list()] == ["b"]
    with pytest.raises(KeyError, match=r"unknown personality 'a' \(known: b\)"):
        registry.get("a")


def test_unknown_id_lists_known_ids(root: Path) -> None:
    put(root / "default" / "SOUL.md", "Hi.")
    put(root / "writer" / "SOUL.md", "Hi.")
    registry = FilePersonalityRegistry(str(root))
    with pytest.raises(KeyError, match=r"unknown personality 'nope' \(known: default, writer\)"):
        registry.get("nope")
    with pytest.raises(KeyError, match=r"unknown personality '\.\./default'"):
        registry.get("../default")
    empty = FilePersonalityRegistry(str(root / "missing"))
    assert empty.list() == []
    with pytest.raises(KeyError, match="has no personalities"):
        empty.get("default")


def test_invalid_toml_keeps_last_good_and_reports(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    put(root / "default" / "SOUL.md", "Good soul.")
    put(root / "default" / "config.toml", 'name = "Good"\n')
    registry = FilePersonalityRegistry(str(root))
    assert registry.get("default").name == "Good"
    assert registry.errors() == {}

    with caplog.at_level(logging.WARNING):
        put(root / "default" / "config.toml", 'name = "Broken\n')
        assert registry.get("default").name == "Good"
        registry.get("default")
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1  # reported once per bad edit, not on every turn
    assert "serving the last good version" in warnings[0].getMessage()
    errors = registry.errors()
    assert list(errors) == ["default"]
    assert "config.toml: invalid TOML" in errors["default"]

    put(root / "default" / "config.toml", 'name = "Fixed"\n')
    assert registry.get("default").name == "Fixed"
    assert registry.errors() == {}


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        ("toolset = 'read_file'\n", "'toolset' must be a list of non-empty strings"),
        ("name = 3\n", "'name' must be a string, not int"),
        ("toolsets = []\n", "unknown key 'toolsets'"),
        ("fs_reach = 'everywhere'\n", "'fs_reach' must be a table"),
        ("[fs_reach]\nwirte = ['.']\n", "unknown key 'fs_reach.wirte'"),
        ("[fs_reach]\nread = ['.', 4]\n", "'fs_reach.read' must be a list of non-empty strings"),
    ],
)
def test_wrong_types_are_reported_naming_file_and_key(
    root: Path, config: str, problem: str
) -> None:
    put(root / "p" / "SOUL.md", "Soul.")
    put(root / "p" / "config.toml", config)
    registry = FilePersonalityRegistry(str(root))
    with pytest.raises(KeyError) as info:
        registry.get("p")
    message = str(info.value)
    assert "personality 'p' is invalid" in message
    assert str(root / "p" / "config.toml") in message
    assert problem in message
    assert registry.list() == []
    assert problem in registry.errors()["p"]


def test_empty_soul_keeps_last_good(root: Path) -> None:
    put(root / "default" / "SOUL.md", "Real soul.")
    registry = FilePersonalityRegistry(str(root))
    assert registry.get("default").soul == "Real soul."
    put(root / "default" / "SOUL.md", "  \n")
    assert registry.get("default").soul == "Real soul."
    assert registry.errors()["default"] == f"{root / 'default' / 'SOUL.md'}: is empty"


def test_soul_briefly_missing_keeps_last_good(root: Path) -> None:
    put(root / "default" / "SOUL.md", "Still here.")
    registry = FilePersonalityRegistry(str(root))
    registry.get("default")
    (root / "default" / "SOUL.md").unlink()  # an editor's save-by-rename in progress
    assert registry.get("default").soul == "Still here."
    assert registry.errors()["default"].endswith("SOUL.md: missing")
    put(root / "default" / "SOUL.md", "Saved.")
    assert registry.get("default").soul == "Saved."


def test_never_valid_personality_raises_with_the_problem(root: Path) -> None:
    (root / "draft").mkdir(parents=True)
    put(root / "draft" / "SOUL.md", "")
    registry = FilePersonalityRegistry(str(root))
    with pytest.raises(KeyError, match=r"personality 'draft' is invalid: .*SOUL\.md: is empty"):
        registry.get("draft")


def test_default_personality_is_written_once(root: Path) -> None:
    assert write_default_personality(str(root)) is True
    soul = root / "default" / "SOUL.md"
    config = root / "default" / "config.toml"
    assert soul.read_text() == DEFAULT_SOUL
    default = FilePersonalityRegistry(str(root)).get("default")
    assert default.name == "Seam"
    # Every built-in tool, and nothing the registry does not know.
    assert default.toolset == tuple(sorted(build_tool_registry().names()))
    assert {t.name for t in FILE_TOOLS} <= set(default.toolset)
    assert (default.fs_read, default.fs_write) == ((".",), (".",))
    assert len(default.soul.split()) < 60  # every request carries it; tiny models must cope

    soul.write_text("My own soul.")
    config.unlink()  # deleting the config on purpose means "all tools"
    assert write_default_personality(str(root)) is False
    assert soul.read_text() == "My own soul."
    assert not config.exists()


def test_default_personality_finishes_an_interrupted_seed(root: Path) -> None:
    put(root / "default" / "config.toml", 'name = "Mine"\n')
    assert write_default_personality(str(root)) is True
    assert (root / "default" / "config.toml").read_text() == 'name = "Mine"\n'
    assert (root / "default" / "SOUL.md").read_text() == DEFAULT_SOUL


def test_safety_and_fallback_keys_are_read_and_checked(tmp_path: Path) -> None:
    root = tmp_path / "personalities"
    folder = root / "ops"
    folder.mkdir(parents=True)
    (folder / "SOUL.md").write_text("You run servers.")
    (folder / "config.toml").write_text(
        'approval_mode = "smart"\nnetwork = true\n'
        'fallback = ["anthropic:claude-haiku-4-5", "local"]\n'
    )
    registry = FilePersonalityRegistry(str(root))
    ops = registry.get("ops")
    assert (ops.approval_mode, ops.network) == ("smart", True)
    assert ops.fallback == ("anthropic:claude-haiku-4-5", "local")
    (folder / "config.toml").write_text('approval_mode = "yolo"\n')
    stat = (folder / "config.toml").stat()
    os.utime(folder / "config.toml", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert registry.get("ops").approval_mode == "smart"  # the last good version is kept
    assert "approval_mode" in registry.errors()["ops"]
