"""The four file tools over ScopedStorage(FsStorage) on real files."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.tools import CancelToken, Tool, ToolContext, ToolError
from seam.core.storage import ScopedStorage
from seam.core.tool_registry import DefaultToolRegistry
from seam.plugins.tools.files import (
    FILE_TOOLS,
    LIST_LIMIT,
    MATCH_LIMIT,
    ListDir,
    ReadFile,
    SearchFiles,
    WriteFile,
    register_file_tools,
)
from seam.services.storage.fs import FsStorage
from tests.support.tools import checked


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture
def ctx(work: Path) -> ToolContext:
    return ToolContext(session_key="s", storage=ScopedStorage(FsStorage(), working_dir=str(work)))


async def run(tool: Tool, ctx: ToolContext, **args: Any) -> str:
    return await checked(tool).run(args, ctx)


# --- registration and definitions ------------------------------------------------------


def test_registered_tools_have_short_definitions() -> None:
    registry = DefaultToolRegistry()
    register_file_tools(registry)
    assert registry.names() == ["list_dir", "read_file", "search_files", "write_file"]
    for tool in FILE_TOOLS:
        assert isinstance(tool, Tool)
        assert len(tool.description.split()) <= 25, tool.name
        for prop in tool.parameters["properties"].values():
            assert len(prop["description"].split()) <= 12
    flags = {t.name: (t.concurrent, t.idempotent) for t in FILE_TOOLS}
    assert flags == {
        "read_file": (True, True),
        "write_file": (False, True),
        "list_dir": (True, True),
        "search_files": (True, True),
    }


# --- read_file -------------------------------------------------------------------------


async def test_read_file_numbers_lines(ctx: ToolContext, work: Path) -> None:
    (work / "a.py").write_text("import os\r\n\nprint(os)\n")
    assert await run(ReadFile(), ctx, path="a.py") == "1|import os\n2|\n3|print(os)"


async def test_read_file_pages_with_offset_and_limit(ctx: ToolContext, work: Path) -> None:
    (work / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 3001)))
    first = await run(ReadFile(), ctx, path="long.txt")
    lines = first.split("\n")
    assert lines[0] == "   1|line 1"
    assert lines[1999] == "2000|line 2000"
    assert lines[-1] == "(1000 more lines; continue with offset=2001)"
    page = await run(ReadFile(), ctx, path="long.txt", offset="12", limit=3)
    assert page == "12|line 12\n13|line 13\n14|line 14\n(2986 more lines; continue with offset=15)"
    tail = await run(ReadFile(), ctx, path="long.txt", offset=2999)
    assert tail == "2999|line 2999\n3000|line 3000"


async def test_read_file_cuts_very_long_lines(ctx: ToolContext, work: Path) -> None:
    (work / "min.js").write_text("x" * 5000)
    out = await run(ReadFile(), ctx, path="min.js")
    assert out.startswith("1|" + "x" * 2000)
    assert out.endswith("[line cut at 2000 chars]")


async def test_read_file_empty_and_errors(ctx: ToolContext, work: Path) -> None:
    (work / "empty.txt").write_text("")
    (work / "short.txt").write_text("one\ntwo\n")
    (work / "blob.bin").write_bytes(b"\xff\xfe\x00\x01")
    assert await run(ReadFile(), ctx, path="empty.txt") == "(empty.txt is empty)"
    with pytest.raises(ToolError, match=r"offset 5 is past the end of short\.txt \(2 lines\)"):
        await run(ReadFile(), ctx, path="short.txt", offset=5)
    with pytest.raises(ToolError, match=r"no such file or directory: .*missing\.txt"):
        await run(ReadFile(), ctx, path="missing.txt")
    with pytest.raises(ToolError, match="looks binary"):
        await run(ReadFile(), ctx, path="blob.bin")
    with pytest.raises(ToolError, match="outside the allowed read roots"):
        await run(ReadFile(), ctx, path="../../etc/hostname")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "missing required argument 'path'"),
        ({"path": 5}, "'path' must be a string (got 5)"),
        ({"path": ""}, "'path' must not be empty"),
        ({"path": "a", "offset": "first"}, "'offset' must be an integer (got \"first\")"),
        ({"path": "a", "offset": True}, "'offset' must be an integer (got true)"),
        ({"path": "a", "offset": 0}, "'offset' must be >= 1 (got 0)"),
        ({"path": "a", "limit": 0}, "'limit' must be >= 1 (got 0)"),
        ({"path": "a", "lines": 5}, "unknown argument 'lines' (expected: path, offset, limit)"),
    ],
)
async def test_read_file_bad_arguments(
    ctx: ToolContext, args: Mapping[str, Any], message: str
) -> None:
    with pytest.raises(ToolError) as info:
        await checked(ReadFile()).run(args, ctx)
    assert str(info.value) == f"invalid arguments for read_file: {message}"


# --- write_file ------------------------------------------------------------------------


async def test_write_file_creates_and_overwrites(ctx: ToolContext, work: Path) -> None:
    out = await run(WriteFile(), ctx, path="new/dir/hé.txt", content="héllo\n")
    assert out == "wrote 7 bytes to new/dir/hé.txt"
    assert (work / "new" / "dir" / "hé.txt").read_text() == "héllo\n"
    await run(WriteFile(), ctx, path="new/dir/hé.txt", content="bye")
    assert (work / "new" / "dir" / "hé.txt").read_text() == "bye"


async def test_write_file_refuses_to_wipe_a_file(ctx: ToolContext, work: Path) -> None:
    (work / "keep.txt").write_text("precious")
    with pytest.raises(ToolError, match=r"refusing to replace non-empty keep\.txt"):
        await run(WriteFile(), ctx, path="keep.txt", content="")
    assert (work / "keep.txt").read_text() == "precious"
    # A new or already-empty file may be written empty.
    assert await run(WriteFile(), ctx, path="blank.txt", content="") == "wrote 0 bytes to blank.txt"
    assert await run(WriteFile(), ctx, path="blank.txt", content="") == "wrote 0 bytes to blank.txt"
    assert (work / "blank.txt").read_text() == ""


async def test_write_file_errors(ctx: ToolContext, work: Path, tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="missing required argument 'content'"):
        await run(WriteFile(), ctx, path="a.txt")
    with pytest.raises(ToolError, match=r"'content' must be a string \(got \{\"x\": 1\}\)"):
        await run(WriteFile(), ctx, path="a.txt", content={"x": 1})
    with pytest.raises(ToolError, match="outside the allowed write roots"):
        await run(WriteFile(), ctx, path="../escape.txt", content="x")
    (work / "link.txt").symlink_to(tmp_path / "escape.txt")
    with pytest.raises(ToolError, match="outside the allowed write roots"):
        await run(WriteFile(), ctx, path="link.txt", content="x")
    assert not (tmp_path / "escape.txt").exists()
    assert not (work / "a.txt").exists()


# --- list_dir --------------------------------------------------------------------------


async def test_list_dir_marks_dirs_and_sizes(ctx: ToolContext, work: Path) -> None:
    (work / "src").mkdir()
    (work / "README.md").write_text("x" * 2048)
    (work / "tiny").write_text("abc")
    (work / "src" / "m.py").write_text("")
    assert await run(ListDir(), ctx) == "README.md  2.0 KB\nsrc/\ntiny  3 B"
    assert await run(ListDir(), ctx, path="src") == "m.py  0 B"
    (work / "void").mkdir()
    assert await run(ListDir(), ctx, path="void") == "(void is empty)"


async def test_list_dir_caps_entries(ctx: ToolContext, work: Path) -> None:
    for i in range(LIST_LIMIT + 7):
        (work / f"f{i:04}").write_text("")
    lines = (await run(ListDir(), ctx)).split("\n")
    assert len(lines) == LIST_LIMIT + 1
    assert lines[0] == "f0000  0 B"
    assert lines[-1] == "(7 more entries not shown)"


async def test_list_dir_errors(ctx: ToolContext, work: Path) -> None:
    (work / "file.txt").write_text("x")
    with pytest.raises(ToolError, match="not a directory"):
        await run(ListDir(), ctx, path="file.txt")
    with pytest.raises(ToolError, match="no such file or directory"):
        await run(ListDir(), ctx, path="nope")
    with pytest.raises(ToolError, match="outside the allowed read roots"):
        await run(ListDir(), ctx, path="/")
    with pytest.raises(ToolError, match="'path' must be a string"):
        await run(ListDir(), ctx, path=["."])


# --- search_files ----------------------------------------------------------------------


@pytest.fixture
def project(work: Path) -> Path:
    (work / "src").mkdir()
    (work / "src" / "app.py").write_text("def main():\n    return helper(1)\n\ndef helper(x):\n")
    (work / "src" / "notes.md").write_text("call helper( when needed\n")
    (work / "README.md").write_text("Run main() to start.\n")
    for skipped in (".git", "node_modules", ".venv", "__pycache__"):
        (work / skipped).mkdir()
        (work / skipped / "x.py").write_text("def helper(): pass\n")
    (work / "image.bin").write_bytes(b"\xffhelper\xfe")
    (work / "big.txt").write_text("helper\n" * 200_000)  # 1.4 MB: over the size cap
    return work


async def test_search_regex_reports_path_line_text(ctx: ToolContext, project: Path) -> None:
    out = await run(SearchFiles(), ctx, pattern=r"def \w+\(")
    assert out == "src/app.py:1: def main():\nsrc/app.py:4: def helper(x):"


async def test_search_invalid_regex_falls_back_to_literal(ctx: ToolContext, project: Path) -> None:
    out = await run(SearchFiles(), ctx, pattern="helper(")
    assert out.split("\n") == [
        "src/app.py:2: return helper(1)",
        "src/app.py:4: def helper(x):",
        "src/notes.md:1: call helper( when needed",
        "(not a valid regex; searched for the literal text)",
    ]


async def test_search_glob_and_path_filter(ctx: ToolContext, project: Path) -> None:
    assert await run(SearchFiles(), ctx, pattern="main", glob="*.md") == (
        "README.md:1: Run main() to start."
    )
    assert await run(SearchFiles(), ctx, pattern="helper", path="src", glob="*.md") == (
        "src/notes.md:1: call helper( when needed"
    )
    assert await run(SearchFiles(), ctx, pattern="helper", path="src/notes.md") == (
        "src/notes.md:1: call helper( when needed"
    )
    assert await run(SearchFiles(), ctx, pattern="zebra", path="src") == (
        "no matches for 'zebra' in src"
    )


async def test_search_anchors_work_per_line(ctx: ToolContext, project: Path) -> None:
    assert await run(SearchFiles(), ctx, pattern=r"^def", glob="*.py") == (
        "src/app.py:1: def main():\nsrc/app.py:4: def helper(x):"
    )


async def test_search_caps_matches(ctx: ToolContext, work: Path) -> None:
    (work / "many.txt").write_text("hit\n" * 500)
    lines = (await run(SearchFiles(), ctx, pattern="hit")).split("\n")
    assert len(lines) == MATCH_LIMIT + 1
    assert lines[0] == "many.txt:1: hit"
    assert lines[-1].startswith(f"(stopped at {MATCH_LIMIT} matches")


async def test_search_stays_in_reach_and_survives_symlink_loops(
    ctx: ToolContext, work: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.txt").write_text("needle outside\n")
    (work / "a.txt").write_text("needle inside\n")
    (work / "escape").symlink_to(outside)
    (work / "loop").symlink_to(work)
    out = await run(SearchFiles(), ctx, pattern="needle")
    assert out == "a.txt:1: needle inside\n(1 paths skipped: access denied or unreadable)"
    with pytest.raises(ToolError, match="outside the allowed read roots"):
        await run(SearchFiles(), ctx, pattern="needle", path=str(outside))


async def test_search_stops_when_cancelled(work: Path) -> None:
    (work / "a.txt").write_text("needle\n")
    cancel = CancelToken()
    cancel.cancel("user pressed stop")
    storage = ScopedStorage(FsStorage(), working_dir=str(work))
    ctx = ToolContext(session_key="s", storage=storage, cancel=cancel)
    assert await run(SearchFiles(), ctx, pattern="needle") == "no matches for 'needle' in ."


async def test_search_bad_arguments(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="missing required argument 'pattern'"):
        await run(SearchFiles(), ctx)
    with pytest.raises(ToolError, match="'pattern' must not be empty"):
        await run(SearchFiles(), ctx, pattern="")
    with pytest.raises(ToolError, match=r"'glob' must be a string \(got 3\)"):
        await run(SearchFiles(), ctx, pattern="x", glob=3)
    with pytest.raises(ToolError, match="no such file or directory"):
        await run(SearchFiles(), ctx, pattern="x", path="nowhere")
