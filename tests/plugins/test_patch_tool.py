"""The patch tool over ScopedStorage(FsStorage) on real files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from seam.contracts.tools import Tool, ToolContext, ToolError
from seam.core.storage import ScopedStorage
from seam.plugins.tools.patch import Patch
from seam.services.storage.fs import FsStorage
from tests.support.tools import checked

SOURCE = """\
import os


def greet(name):
    print("hello", name)
    return name


def part(name):
    print("bye", name)
    return name
"""


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "app.py").write_text(SOURCE)
    return work


@pytest.fixture
def ctx(work: Path) -> ToolContext:
    return ToolContext(session_key="s", storage=ScopedStorage(FsStorage(), working_dir=str(work)))


async def patch(ctx: ToolContext, **args: Any) -> str:
    return await checked(Patch()).run(args, ctx)


async def refused(ctx: ToolContext, **args: Any) -> str:
    with pytest.raises(ToolError) as caught:
        await patch(ctx, **args)
    return str(caught.value)


def test_definition_is_short_and_not_replayable() -> None:
    tool = Patch()
    assert isinstance(tool, Tool)
    assert len(tool.description.split()) <= 25
    assert (tool.concurrent, tool.idempotent) == (False, False)


# --- exact replacement ---------------------------------------------------------------------


async def test_replaces_a_unique_match_and_shows_the_change(ctx: ToolContext, work: Path) -> None:
    out = await patch(
        ctx,
        path="app.py",
        old='    print("hello", name)\n',
        new=('    print("hello,", name)\n    log(name)\n'),
    )
    assert (work / "app.py").read_text() == SOURCE.replace(
        '    print("hello", name)\n', '    print("hello,", name)\n    log(name)\n'
    )
    lines = out.split("\n")
    assert lines[0] == "patched app.py: +2 -1 lines"
    assert lines[1:] == [
        "3|",
        "4|def greet(name):",
        '5|    print("hello,", name)',
        "6|    log(name)",
        "7|    return name",
        "8|",
        "9|",
    ]


async def test_ambiguous_match_is_refused_with_the_lines(ctx: ToolContext, work: Path) -> None:
    message = await refused(ctx, path="app.py", old="    return name\n", new="    return None\n")
    assert "matches 2 times" in message
    assert "lines 6, 11" in message
    assert "replace_all" in message
    assert (work / "app.py").read_text() == SOURCE


async def test_replace_all_changes_every_occurrence(ctx: ToolContext, work: Path) -> None:
    out = await patch(ctx, path="app.py", old="name", new="who", replace_all="true")
    assert "name" not in (work / "app.py").read_text()
    assert out.startswith("patched app.py: +6 -6 lines (6 replacements)\n2|\n3|\n4|def greet(who):")
    assert out.count("def greet(who)") == 1  # nearby changes are shown once


async def test_not_found_shows_the_closest_lines(ctx: ToolContext, work: Path) -> None:
    message = await refused(
        ctx, path="app.py", old='def greet(nme):\n    print("helo", name)', new="x"
    )
    assert "'old' was not found in app.py" in message
    assert "closest lines (4-5)" in message
    assert '5|    print("hello", name)' in message
    assert (work / "app.py").read_text() == SOURCE


async def test_line_number_prefixes_copied_from_read_file_are_named(ctx: ToolContext) -> None:
    message = await refused(ctx, path="app.py", old='5|    print("hello", name)', new="x")
    assert "line-number prefixes" in message


async def test_crlf_file_is_matched_with_lf_text_and_keeps_crlf(
    ctx: ToolContext, work: Path
) -> None:
    (work / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await patch(ctx, path="win.txt", old="one\ntwo\n", new="one\n2\n")
    assert (work / "win.txt").read_bytes() == b"one\r\n2\r\nthree\r\n"


async def test_bad_arguments_are_named(ctx: ToolContext) -> None:
    assert "pass 'old' and 'new'" in await refused(ctx, path="app.py")
    assert "not both" in await refused(ctx, path="app.py", old="a", new="b", diff="@@")
    assert "the same" in await refused(ctx, path="app.py", old="import os", new="import os")
    assert "must not be empty" in await refused(ctx, path="app.py", old="", new="x")
    assert "replace_all" in await refused(ctx, path="app.py", old="os", new="x", replace_all=3)
    assert "no such file: nope.py" in await refused(ctx, path="nope.py", old="a", new="b")


async def test_writes_stay_inside_the_working_dir(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("secret\n")
    message = await refused(ctx, path="../outside.txt", old="secret", new="changed")
    assert "refused" in message
    assert (tmp_path / "outside.txt").read_text() == "secret\n"


# --- unified diff ----------------------------------------------------------------------------

TWO_HUNKS = """\
--- a/app.py
+++ b/app.py
@@ -4,3 +4,4 @@
 def greet(name):
-    print("hello", name)
+    print("hello,", name)
+    log(name)
     return name
@@ -9,3 +10,3 @@ def greet(name):
 def part(name):
-    print("bye", name)
+    print("goodbye", name)
     return name
"""


async def test_diff_applies_every_hunk(ctx: ToolContext, work: Path) -> None:
    out = await patch(ctx, path="app.py", diff=TWO_HUNKS)
    text = (work / "app.py").read_text()
    assert '    print("hello,", name)\n    log(name)\n    return name\n' in text
    assert '    print("goodbye", name)\n' in text
    assert out.startswith("patched app.py: +3 -2 lines (2 hunks)")
    assert '11|    print("goodbye", name)' in out  # shown at its new line number


async def test_diff_applying_twice_is_refused(ctx: ToolContext) -> None:
    await patch(ctx, path="app.py", diff=TWO_HUNKS)
    message = await refused(ctx, path="app.py", diff=TWO_HUNKS)
    assert "hunk 1 (@@ -4,3 +4,4 @@) does not match app.py" in message


async def test_one_bad_hunk_writes_nothing(ctx: ToolContext, work: Path) -> None:
    bad = TWO_HUNKS.replace('-    print("bye", name)', '-    print("ciao", name)')
    message = await refused(ctx, path="app.py", diff=bad)
    assert message.startswith("hunk 2 (@@ -9,3 +10,3 @@) does not match app.py")
    assert '10|    print("bye", name)' in message  # the closest lines help the model
    assert (work / "app.py").read_text() == SOURCE


async def test_ambiguous_hunk_is_refused_unless_its_line_number_decides(
    ctx: ToolContext, work: Path
) -> None:
    diff = "@@ -6,1 +6,1 @@\n-    return name\n+    return name.upper()\n"
    await patch(ctx, path="app.py", diff=diff)
    assert "    return name.upper()\n\n\ndef part" in (work / "app.py").read_text()
    bare = "@@\n-    print(\n+    print(\n"  # no change after all: skipped; nothing left
    assert "no changes" in await refused(ctx, path="app.py", diff=bare)
    ambiguous = "@@ -40,1 +40,1 @@\n     return name\n+    # done\n"
    (work / "app.py").write_text(SOURCE)
    message = await refused(ctx, path="app.py", diff=ambiguous)
    assert "hunk 1 (@@ -40,1 +40,1 @@) matches 2 places in app.py (lines 6, 11)" in message


async def test_diff_tolerates_bare_headers_and_blank_context(ctx: ToolContext, work: Path) -> None:
    # What models send: "@@" without numbers, a blank context line without its space,
    # trailing whitespace lost on a context line.
    (work / "app.py").write_text(SOURCE.replace("import os\n", "import os   \n"))
    diff = "@@\n import os\n\n\n-def greet(name):\n+def greet(name: str):\n"
    await patch(ctx, path="app.py", diff=diff)
    assert "def greet(name: str):" in (work / "app.py").read_text()


async def test_diff_can_create_a_file(ctx: ToolContext, work: Path) -> None:
    diff = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+first\n+second\n"
    out = await patch(ctx, path="new.txt", diff=diff)
    assert (work / "new.txt").read_text() == "first\nsecond\n"
    assert out.startswith("patched new.txt: +2 -0 lines (1 hunk)")


async def test_diff_for_several_files_is_refused(ctx: ToolContext) -> None:
    diff = TWO_HUNKS + "--- a/other.py\n+++ b/other.py\n@@ -1 +1 @@\n-x\n+y\n"
    assert "touches 2 files (app.py, other.py)" in await refused(ctx, path="app.py", diff=diff)


async def test_overlapping_hunks_are_refused(ctx: ToolContext, work: Path) -> None:
    diff = (
        '@@ -4,2 +4,2 @@\n def greet(name):\n-    print("hello", name)\n+    pass\n'
        '@@ -5,2 +5,2 @@\n-    print("hello", name)\n-    return name\n+    return 1\n'
    )
    assert "overlap" in await refused(ctx, path="app.py", diff=diff)
    assert (work / "app.py").read_text() == SOURCE


async def test_insertion_without_context_needs_a_line_number(ctx: ToolContext, work: Path) -> None:
    assert "no context lines" in await refused(ctx, path="app.py", diff="@@\n+# header\n")
    await patch(ctx, path="app.py", diff="@@ -1,0 +2,1 @@\n+import sys\n")
    assert (work / "app.py").read_text().startswith("import os\nimport sys\n\n")
