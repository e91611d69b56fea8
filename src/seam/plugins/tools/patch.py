"""The `patch` tool: edit a file by exact replacement or by a unified diff.

Both modes refuse rather than guess: text that is not found, or found in several places,
is an error the model can fix by sending more context, never a silent edit of the wrong
spot. A diff applies whole or not at all, because a half-applied patch leaves a file
that matches neither the model's picture nor the original.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from seam.contracts.storage import NotFound, StorageError
from seam.contracts.tool_spec import SpecTool, ToolSpec
from seam.contracts.tools import ToolContext, ToolError

CONTEXT_LINES = 2  # unchanged lines shown around each change in the result
REGION_LINES = 12  # lines shown per changed region, at most
REGIONS_SHOWN = 3  # changed regions shown in the result, at most
LOCATIONS_LISTED = 10  # line numbers listed for an ambiguous match
CLOSE_RATIO = 0.6  # how alike a line must be to be offered as "closest"

_HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
_NUMBERED = re.compile(r"\s*\d+\|")


@dataclass(slots=True)
class _Hunk:
    number: int
    header: str
    old_start: int | None  # 1-based line of the header's old side, when it has one
    old_empty: bool  # the header says the old side has no lines ("-N,0")
    old: list[str]
    new: list[str]
    added: int = 0
    removed: int = 0

    def name(self) -> str:
        return f"hunk {self.number} ({self.header})"

    def take(self, line: str) -> bool:
        """Add one body line ("+", "-", " " or a blank context line the model left bare);
        False if the line is none of those and so ends the hunk."""
        if line.startswith("+"):
            self.new.append(line[1:])
            self.added += 1
        elif line.startswith("-"):
            self.old.append(line[1:])
            self.removed += 1
        elif line.startswith(" ") or not line:
            self.old.append(line[1:])
            self.new.append(line[1:])
        else:
            # "\ No newline at end of file": the file keeps its own ending.
            return line.startswith("\\")
        return True


class Patch(SpecTool):
    spec = ToolSpec(
        name="patch",
        description=(
            "Edit a file: replace exact text `old` with `new` (must match once), "
            "or apply a unified `diff`. Refuses ambiguous or unmatched edits."
        ),
        arguments={
            "path": {
                "type": "string",
                "minLength": 1,
                "description": "Path, relative to the working directory.",
            },
            "old": {"type": "string", "description": "Exact text to replace, unique in the file."},
            "new": {"type": "string", "description": "Replacement text."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence of old."},
            "diff": {
                "type": "string",
                "description": "Unified diff for this file, instead of old.",
            },
        },
        required=("path",),
    )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        # Types come checked by the schema; which arguments go together is checked here
        # (a schema could say it with oneOf, but the local model's grammar could not).
        path: str = args["path"]
        diff: str | None = args.get("diff")
        old: str | None = args.get("old")
        new: str | None = args.get("new")
        if diff is not None and old is not None:
            raise ToolError("pass either 'old' and 'new' or 'diff', not both")
        if diff is None and old is None:
            raise ToolError("pass 'old' and 'new' for an exact replacement, or 'diff'")
        if old is not None and new is None:
            raise ToolError("missing argument 'new': the replacement text ('' deletes 'old')")
        try:
            text: str | None = await ctx.storage.read_text(path)
        except NotFound:
            text = None
        except StorageError as exc:
            raise ToolError(str(exc)) from None
        if diff is not None:
            hunks = _parse_diff(diff)
            if text is None and any(h.old for h in hunks):
                raise ToolError(
                    f"no such file: {path} (a diff that creates a file has no '-' or context lines)"
                )
            new_text, summary, regions = _apply_diff(text or "", hunks, path)
        else:
            if text is None:
                raise ToolError(f"no such file: {path}; create it with write_file")
            assert old is not None and new is not None
            replace_all: bool = args.get("replace_all", False)
            new_text, summary, regions = _replace(text, old, new, replace_all, path)
        if new_text == text:
            raise ToolError(f"the edit leaves {path} unchanged")
        try:
            await ctx.storage.write_text(path, new_text)
        except StorageError as exc:
            raise ToolError(str(exc)) from None
        return f"patched {path}: {summary}\n{_show(new_text, regions)}"


# --- exact replacement --------------------------------------------------------------------


def _replace(
    text: str, old: str, new: str, replace_all: bool, path: str
) -> tuple[str, str, list[tuple[int, int]]]:
    if not old:
        raise ToolError("'old' must not be empty; to write a whole file use write_file")
    if old == new:
        raise ToolError("'old' and 'new' are the same: nothing to change")
    if "\r\n" in text and "\n" in old and "\r\n" not in old:
        # The file has CRLF endings; the model almost always sends LF.
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
    starts = _occurrences(text, old)
    if not starts:
        raise ToolError(_not_found(text, old, path))
    if len(starts) > 1 and not replace_all:
        lines = [text.count("\n", 0, s) + 1 for s in starts[:LOCATIONS_LISTED]]
        more = "" if len(starts) <= LOCATIONS_LISTED else ", ..."
        raise ToolError(
            f"'old' matches {len(starts)} times in {path} (lines "
            f"{', '.join(map(str, lines))}{more}); include more surrounding lines so it "
            "matches once, or pass replace_all=true"
        )
    if not replace_all:
        starts = starts[:1]
    new_text = text.replace(old, new, len(starts))
    shift = len(new) - len(old)
    span = new.count("\n") + 1
    regions = []
    for i, start in enumerate(starts[:REGIONS_SHOWN]):
        first = new_text.count("\n", 0, start + i * shift)
        regions.append((first, first + span))
    added, removed = _line_delta(old.split("\n"), new.split("\n"))
    times = f" ({len(starts)} replacements)" if len(starts) > 1 else ""
    return new_text, f"+{added * len(starts)} -{removed * len(starts)} lines{times}", regions


def _occurrences(text: str, old: str) -> list[int]:
    starts = []
    at = text.find(old)
    while at != -1:
        starts.append(at)
        at = text.find(old, at + len(old))
    return starts


def _line_delta(old: Sequence[str], new: Sequence[str]) -> tuple[int, int]:
    from difflib import SequenceMatcher  # on first use: most runs patch nothing

    added = removed = 0
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed


def _not_found(text: str, old: str, path: str) -> str:
    old_lines = old.split("\n")
    message = f"'old' was not found in {path}."
    if all(_NUMBERED.match(line) for line in old_lines if line.strip()):
        return f"{message} It includes read_file's line-number prefixes ('12|'); remove them."
    hint = _closest(_split_lines(text)[0], old_lines)
    return f"{message} {hint}" if hint else f"{message} Read the file again and copy it exactly."


def _closest(lines: Sequence[str], wanted: Sequence[str]) -> str:
    """The file region most like `wanted`, as a hint for the model's next try."""
    first = _best_window(lines, wanted)
    if first < 0:
        return "No similar lines either; read the file again and copy the text exactly."
    last = min(len(lines), first + min(len(wanted), REGION_LINES))
    return (
        f"The closest lines ({first + 1}-{last}) are:\n{_numbered(lines, first, last)}\n"
        "Copy the text exactly, whitespace included."
    )


def _best_window(lines: Sequence[str], wanted: Sequence[str]) -> int:
    """Where `wanted` most nearly starts, or -1. Each of its lines found in the file
    (whitespace aside) votes for a start, rarer lines louder; when none is found, the
    line most like its longest line decides. Linear in the file's size either way."""
    where: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        where.setdefault(line.strip(), []).append(i)
    votes: dict[int, float] = {}
    for offset, line in enumerate(wanted):
        key = line.strip()
        found = where.get(key, ()) if key else ()
        for i in found:
            votes[i - offset] = votes.get(i - offset, 0.0) + 1.0 / len(found)
    if votes:
        return max(0, max(votes, key=votes.__getitem__))
    anchor_at, anchor = max(enumerate(w.strip() for w in wanted), key=lambda p: len(p[1]))
    from difflib import SequenceMatcher

    matcher = SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(anchor)
    best_ratio, best_at = CLOSE_RATIO, -1
    for i, line in enumerate(lines):
        matcher.set_seq1(line.strip())
        if matcher.real_quick_ratio() <= best_ratio or matcher.quick_ratio() <= best_ratio:
            continue
        ratio = matcher.ratio()
        if ratio > best_ratio:
            best_ratio, best_at = ratio, i
    return max(0, best_at - anchor_at) if best_at >= 0 and anchor else -1


# --- unified diff ---------------------------------------------------------------------------


def _parse_diff(diff: str) -> list[_Hunk]:
    """Lenient on what models get wrong (hunk line counts, blank context lines without their
    leading space, bare `@@` headers), strict on what decides where an edit lands."""
    lines = diff.replace("\r\n", "\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    hunks: list[_Hunk] = []
    files: list[str] = []
    current: _Hunk | None = None
    for i, line in enumerate(lines):
        if line.startswith("@@"):
            match = _HUNK_HEADER.match(line)
            header = match.group(0) if match else "@@"
            start = int(match.group(1)) if match else None
            empty = match is not None and match.group(2) == "0"
            current = _Hunk(len(hunks) + 1, header, start, empty, [], [])
            hunks.append(current)
        elif line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            current = None
        elif line.startswith("+++ ") and current is None:
            name = line[4:].split("\t")[0].strip()
            files.append(name[2:] if name[:2] in ("a/", "b/") else name)
        elif current is not None and not current.take(line):
            current = None  # anything else ends the hunk; outside one, "diff --git",
            # "index ..." and prose around the diff are passed over
    if len(set(files)) > 1:
        raise ToolError(
            f"the diff touches {len(set(files))} files ({', '.join(sorted(set(files)))}); "
            "send one diff per file"
        )
    hunks = [h for h in hunks if h.old != h.new]
    if not hunks:
        raise ToolError("the diff has no changes: no '@@' hunk with '+' or '-' lines")
    return hunks


def _apply_diff(text: str, hunks: list[_Hunk], path: str) -> tuple[str, str, list[tuple[int, int]]]:
    lines, newline, final_newline = _split_lines(text)
    placed = sorted(((_locate(lines, h, path), h) for h in hunks), key=lambda p: p[0])
    for (start, hunk), (next_start, following) in pairwise(placed):
        if start + len(hunk.old) > next_start:
            raise ToolError(f"{hunk.name()} and {following.name()} overlap in {path}")
    regions = []
    shift = 0
    for start, hunk in placed:
        at = start + shift
        regions.append((at, at + len(hunk.new)))
        shift += len(hunk.new) - len(hunk.old)
    for start, hunk in reversed(placed):
        lines[start : start + len(hunk.old)] = hunk.new
    new_text = newline.join(lines)
    if lines and (final_newline or not text):
        new_text += newline
    added = sum(h.added for h in hunks)
    removed = sum(h.removed for h in hunks)
    n = len(hunks)
    summary = f"+{added} -{removed} lines ({n} hunk{'s' if n > 1 else ''})"
    return new_text, summary, regions[:REGIONS_SHOWN]


def _locate(lines: list[str], hunk: _Hunk, path: str) -> int:
    """Where the hunk's old side starts: the one place it matches exactly, or (failing
    that) ignoring trailing whitespace. The header's line number only breaks ties."""
    if not hunk.old:
        if hunk.old_start is None:
            raise ToolError(
                f"{hunk.name()} has no context lines and no line number; include a few "
                "unchanged lines around the change"
            )
        # "-N,0" inserts after line N; "-N" with no count means the change starts at line N.
        at = hunk.old_start if hunk.old_empty else hunk.old_start - 1
        if not 0 <= at <= len(lines):
            raise ToolError(f"{hunk.name()} inserts at line {at}, past the end of {path}")
        return at
    starts = _find_block(lines, hunk.old, strict=True) or _find_block(lines, hunk.old, False)
    if not starts:
        hint = _closest(lines, hunk.old)
        raise ToolError(
            f"{hunk.name()} does not match {path}: its context and '-' lines were not found "
            f"together. {hint}"
        )
    if len(starts) == 1:
        return starts[0]
    if hunk.old_start is not None and hunk.old_start - 1 in starts:
        return hunk.old_start - 1
    listed = ", ".join(str(s + 1) for s in starts[:LOCATIONS_LISTED])
    raise ToolError(
        f"{hunk.name()} matches {len(starts)} places in {path} (lines {listed}); add more "
        "context lines or correct the @@ line numbers"
    )


def _find_block(lines: list[str], block: list[str], strict: bool) -> list[int]:
    if not strict:
        lines = [line.rstrip() for line in lines]
        block = [line.rstrip() for line in block]
    first, size = block[0], len(block)
    return [
        i
        for i in range(len(lines) - size + 1)
        if lines[i] == first and lines[i : i + size] == block
    ]


# --- shared ---------------------------------------------------------------------------------


def _split_lines(text: str) -> tuple[list[str], str, bool]:
    """Lines without their endings, the file's newline, and whether it ends with one."""
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(newline)
    final = lines[-1] == ""
    if final:
        lines.pop()
    return lines, newline, final


def _numbered(lines: Sequence[str], first: int, last: int) -> str:
    width = len(str(last))
    return "\n".join(f"{n + 1:>{width}}|{lines[n]}" for n in range(first, last))


def _show(text: str, regions: Sequence[tuple[int, int]]) -> str:
    """Each changed region with a little context, numbered like read_file; regions whose
    context touches are shown as one."""
    lines = _split_lines(text)[0]
    windows: list[list[int]] = []
    for first, last in sorted(regions):
        lo = max(0, first - CONTEXT_LINES)
        hi = min(len(lines), max(last, first + 1) + CONTEXT_LINES)
        if windows and lo <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], hi)
        else:
            windows.append([lo, hi])
    out = []
    for lo, hi in windows:
        cut = hi - lo > REGION_LINES
        shown = _numbered(lines, lo, lo + REGION_LINES if cut else hi)
        out.append(f"{shown}\n..." if cut else shown)
    return "\n...\n".join(out)
