"""The four file tools: read, write, list and search, all through `ctx.storage`.

They never touch the filesystem themselves: the session's `ScopedStorage` is the one
place that enforces reach, symlink escapes and the protected list (and, over the real
filesystem, opens what it checked beneath the reach root, never by name again). Descriptions and
schemas are kept short because every model request carries them.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any

from seam.contracts.storage import AccessDenied, NotFound, Storage, StorageEntry, StorageError
from seam.contracts.tool_spec import SpecTool, ToolSpec, positive_integer
from seam.contracts.tools import Tool, ToolContext, ToolError, ToolRegistry

READ_LIMIT = 2000  # lines per read_file call
MAX_LINE_CHARS = 2000  # longer lines (minified code, data) are cut in read_file
LIST_LIMIT = 500  # entries per list_dir call
MATCH_LIMIT = 100  # matches per search_files call
MATCH_LINE_CHARS = 300  # a matching line is cut to this in search results
SEARCH_MAX_FILE_BYTES = 1_000_000
SEARCH_MAX_FILES = 10_000  # files read per search, so a search of a huge tree ends
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)

# Arguments are checked against these schemas before `run` (the registry's validator), so
# `run` relies on them: a string is a string, `offset` is at least 1.
_PATH = {
    "type": "string",
    "minLength": 1,
    "description": "Path, relative to the working directory.",
}


def _cut(line: str, limit: int) -> str:
    return line if len(line) <= limit else f"{line[:limit]}… [line cut at {limit} chars]"


def _lines(text: str) -> list[str]:
    """Lines as an editor numbers them: split on "\\n" only, no phantom last line."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


class ReadFile(SpecTool):
    spec = ToolSpec(
        name="read_file",
        description=(
            "Read a text file. Lines are numbered like '12|text'. "
            "Use offset and limit to page through long files."
        ),
        arguments={
            "path": _PATH,
            "offset": positive_integer("First line to read, 1-based (default 1)."),
            "limit": positive_integer(f"Lines to read (default {READ_LIMIT})."),
        },
        required=("path",),
        concurrent=True,
        idempotent=True,
    )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        path: str = args["path"]
        # int(): JSON Schema counts 5.0 as an integer.
        offset = int(args.get("offset", 1))
        limit = int(args.get("limit", READ_LIMIT))
        try:
            text = await ctx.storage.read_text(path)
        except StorageError as exc:
            raise ToolError(str(exc)) from None
        lines = _lines(text)
        total = len(lines)
        if total == 0:
            return f"({path} is empty)"
        if offset > total:
            raise ToolError(f"offset {offset} is past the end of {path} ({total} lines)")
        end = min(offset - 1 + limit, total)
        width = len(str(end))
        out = [
            f"{n:>{width}}|{_cut(lines[n - 1].removesuffix(chr(13)), MAX_LINE_CHARS)}"
            for n in range(offset, end + 1)
        ]
        if end < total:
            out.append(f"({total - end} more lines; continue with offset={end + 1})")
        return "\n".join(out)


class WriteFile(SpecTool):
    spec = ToolSpec(
        name="write_file",
        description=(
            "Create or overwrite a text file with the full content given. "
            "Missing parent directories are created."
        ),
        arguments={
            "path": _PATH,
            "content": {"type": "string", "description": "The complete new file content."},
        },
        required=("path", "content"),
        idempotent=True,
    )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        path: str = args["path"]
        content: str = args["content"]
        try:
            if not content and await _has_content(ctx.storage, path):
                # Almost always a model that lost its content argument, not a wish to wipe.
                raise ToolError(
                    f"refusing to replace non-empty {path} with empty content; "
                    "pass the complete new content"
                )
            await ctx.storage.write_text(path, content)
        except StorageError as exc:
            raise ToolError(str(exc)) from None
        return f"wrote {len(content.encode('utf-8'))} bytes to {path}"


async def _has_content(storage: Storage, path: str) -> bool:
    if not await storage.exists(path):
        return False
    try:
        return bool(await storage.read_text(path))
    except NotFound:
        return False
    except StorageError:  # binary or unreadable: certainly not empty text
        return True


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    if n < 1024**3:
        return f"{n / 1024**2:.1f} MB"
    return f"{n / 1024**3:.1f} GB"


class ListDir(SpecTool):
    spec = ToolSpec(
        name="list_dir",
        description="List a directory. Subdirectories end with '/'; files show their size.",
        arguments={"path": {**_PATH, "description": "Directory (default: working directory)."}},
        concurrent=True,
        idempotent=True,
    )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        path: str = args.get("path", ".")
        try:
            entries = await ctx.storage.list_dir(path)
        except StorageError as exc:
            raise ToolError(str(exc)) from None
        if not entries:
            return f"({path} is empty)"
        out = [
            f"{e.name}/" if e.is_dir else f"{e.name}  {_size(e.size)}" for e in entries[:LIST_LIMIT]
        ]
        if len(entries) > LIST_LIMIT:
            out.append(f"({len(entries) - LIST_LIMIT} more entries not shown)")
        return "\n".join(out)


class SearchFiles(SpecTool):
    spec = ToolSpec(
        name="search_files",
        description=(
            "Search file contents under a directory for a regex (or literal text). "
            "Returns 'path:line: text' for each matching line."
        ),
        arguments={
            "pattern": {
                "type": "string",
                "minLength": 1,
                "description": "Python regex or plain text.",
            },
            "path": {**_PATH, "description": "Directory or file (default: working directory)."},
            "glob": {"type": "string", "description": "Only files whose name matches, e.g. *.py"},
        },
        required=("pattern",),
        concurrent=True,
        idempotent=True,
    )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        pattern: str = args["pattern"]
        path: str = args.get("path", ".")
        glob: str | None = args.get("glob") or None
        notes: list[str] = []
        try:
            regex = re.compile(pattern, re.MULTILINE)
        except re.error:
            regex = re.compile(re.escape(pattern))
            notes.append("(not a valid regex; searched for the literal text)")
        search = _Search(ctx, regex, glob)
        try:
            await search.run(path)
        except StorageError as exc:
            raise ToolError(str(exc)) from None
        if search.skipped:
            notes.append(f"({search.skipped} paths skipped: access denied or unreadable)")
        if len(search.matches) >= MATCH_LIMIT:
            notes.append(f"(stopped at {MATCH_LIMIT} matches; narrow the pattern, path or glob)")
        elif search.files_read >= SEARCH_MAX_FILES:
            notes.append(f"(stopped after {SEARCH_MAX_FILES} files; narrow the path or glob)")
        if not search.matches:
            return "\n".join([f"no matches for {pattern!r} in {path}", *notes])
        return "\n".join([*search.matches, *notes])


class _Search:
    """One search's walk: depth first in name order, so results are stable run to run."""

    def __init__(self, ctx: ToolContext, regex: re.Pattern[str], glob: str | None) -> None:
        self._storage = ctx.storage
        self._cancel = ctx.cancel
        self._regex = regex
        self._glob = glob
        # Matches are shown relative to the working directory when they are inside it.
        self._base = ctx.storage.resolve(".").rstrip("/") + "/"
        self._seen: set[str] = set()
        self.matches: list[str] = []
        self.files_read = 0
        self.skipped = 0

    def _done(self) -> bool:
        return (
            len(self.matches) >= MATCH_LIMIT
            or self.files_read >= SEARCH_MAX_FILES
            or self._cancel.cancelled
        )

    async def run(self, path: str) -> None:
        storage = self._storage
        try:
            entries = await storage.list_dir(path)
        except NotFound:
            if not await storage.exists(path):
                raise
            # A file, not a directory: search just that file.
            real = storage.resolve(path)
            await self._file(StorageEntry(real.rpartition("/")[2], real, False, 0))
            return
        await self._walk(storage.resolve(path), entries)

    async def _walk(self, real_dir: str, entries: list[StorageEntry]) -> None:
        # A symlinked directory can point back up the tree: visit each real directory once.
        if real_dir in self._seen:
            return
        self._seen.add(real_dir)
        for entry in entries:
            if self._done():
                return
            if entry.is_dir:
                if entry.name in SKIP_DIRS:
                    continue
                try:
                    children = await self._storage.list_dir(entry.path)
                    real = self._storage.resolve(entry.path)
                except StorageError:
                    self.skipped += 1
                    continue
                await self._walk(real, children)
            elif entry.size <= SEARCH_MAX_FILE_BYTES and self._wanted(entry):
                await self._file(entry)

    def _wanted(self, entry: StorageEntry) -> bool:
        glob = self._glob
        if glob is None:
            return True
        target = self._shown(entry.path) if "/" in glob else entry.name
        return fnmatchcase(target, glob)

    def _shown(self, path: str) -> str:
        return path.removeprefix(self._base)

    async def _file(self, entry: StorageEntry) -> None:
        self.files_read += 1
        if self.files_read % 64 == 0:
            # Storage reads may be blocking; let other sessions run during a long search.
            await asyncio.sleep(0)
        try:
            text = await self._storage.read_text(entry.path)
        except AccessDenied:
            self.skipped += 1
            return
        except StorageError:  # binary or vanished: expected in any tree, not worth a note
            return
        regex = self._regex
        if "\x00" in text or regex.search(text) is None:
            return
        shown = self._shown(entry.path)
        for number, line in enumerate(_lines(text), 1):
            if regex.search(line) is not None:
                text_shown = _cut(line.strip(), MATCH_LINE_CHARS)
                self.matches.append(f"{shown}:{number}: {text_shown}")
                if len(self.matches) >= MATCH_LIMIT:
                    return


FILE_TOOLS: tuple[Tool, ...] = (ReadFile(), WriteFile(), ListDir(), SearchFiles())


def register_file_tools(registry: ToolRegistry) -> None:
    for tool in FILE_TOOLS:
        registry.register_tool(tool)
