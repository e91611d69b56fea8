"""`seam memory show|edit|add|remove|search`: the person's side of the agent's memory.

`add` and `remove` follow the same rules as the agent's `memory` tool. `edit` opens the
file in $EDITOR and trusts what the person writes; it only reports the usage after.
`search` ranks entries as the agent's `memory_search` does (words and meaning).
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from seam.apps.cli.memory_consolidate import register as register_consolidate

if TYPE_CHECKING:
    from seam.wiring.memory import MarkdownMemory, MemoryUsage, Target

DEFAULT_EDITOR = "vi"


def _open() -> MarkdownMemory:
    from seam.wiring.memory import build_memory
    from seam.wiring.settings import load_settings

    return build_memory(load_settings())


async def show() -> int:
    from seam.wiring.memory import TARGETS

    memory = _open()
    blocks = []
    for target in TARGETS:
        entries = memory.entries(target)
        body = "\n§\n".join(entries) if entries else "(empty)"
        blocks.append(f"{memory.usage(target)}  {memory.path(target)}\n{body}\n")
    sys.stdout.write("\n".join(blocks))
    return 0


async def edit(target: str) -> int:
    from seam.apps.cli.exits import USAGE
    from seam.apps.cli.runner import CliError
    from seam.wiring.memory import FILES

    if target not in FILES:
        raise CliError(f"unknown memory file {target!r}; use memory or user", USAGE)
    memory = _open()
    path = memory.path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    editor = shlex.split(os.environ.get("EDITOR", "")) or [DEFAULT_EDITOR]
    try:
        editing = await asyncio.create_subprocess_exec(*editor, str(path))
    except OSError as exc:
        raise CliError(f"cannot start the editor {editor[0]!r}: {exc.strerror or exc}") from None
    code = await editing.wait()
    if code:
        raise CliError(f"the editor {editor[0]!r} exited with status {code}")
    usage = memory.usage(target)
    over = "; over the limit: the agent cannot add until entries go" if usage.percent > 100 else ""
    sys.stdout.write(f"{usage}{over}\n")
    return 0


async def add(text: str, user: bool) -> int:
    return _report("added", lambda memory: memory.add(_target(user), text))


async def remove(match: str, user: bool) -> int:
    return _report("removed", lambda memory: memory.remove(_target(user), match))


async def search(query: str, limit: int) -> int:
    """Matches best first, each with its file, entry number and the signals that found
    it; "full text only" said once on stderr when there is no embedder."""
    from seam.apps.cli.exits import USAGE
    from seam.apps.cli.render import Style
    from seam.apps.cli.runner import CliError
    from seam.wiring.memory import build_memory
    from seam.wiring.memory_search import search_memory
    from seam.wiring.settings import load_settings

    if not query.strip():
        raise CliError("the search is empty: give what to look for", USAGE)
    settings = load_settings()
    result = await search_memory(settings, build_memory(settings), query, limit)
    if result.note:
        sys.stderr.write(f"{result.note}\n")
    if not result.matches:
        sys.stdout.write(f"no memory entry matches {query!r}\n")
        return 0
    style = Style.for_stream(sys.stdout)
    for rank, match in enumerate(result.matches, start=1):
        where = style.bold(match.where)
        sys.stdout.write(f"{rank}. {where}  {style.dim('found by ' + match.found_by)}\n")
        for line in style.plain(match.text).splitlines():
            sys.stdout.write(f"   {line}\n")
    return 0


def _target(user: bool) -> Target:
    return "user" if user else "memory"


def _report(done: str, write: Callable[[MarkdownMemory], MemoryUsage]) -> int:
    from seam.apps.cli.runner import CliError
    from seam.wiring.memory import MemoryEntryError

    try:
        usage = write(_open())
    except MemoryEntryError as exc:
        raise CliError(str(exc)) from None
    sys.stdout.write(f"{done}. {usage}\n")
    return 0


UserOption = Annotated[bool, typer.Option("--user", help="USER.md (about you), not MEMORY.md.")]


def register(app: typer.Typer) -> None:
    """Add the `memory` command group to the `seam` app."""
    memory_app = typer.Typer(
        help="Read and edit what the agent remembers (MEMORY.md, USER.md).", no_args_is_help=True
    )

    @memory_app.command("show")
    def show_command() -> None:
        """Print both memory files with their usage."""
        from seam.apps.cli.runner import execute

        execute(show())

    @memory_app.command("edit")
    def edit_command(
        target: Annotated[str, typer.Argument(help="memory or user.")] = "memory",
    ) -> None:
        """Open MEMORY.md (or USER.md) in $EDITOR."""
        from seam.apps.cli.runner import execute

        execute(edit(target))

    @memory_app.command("add")
    def add_command(
        text: Annotated[str, typer.Argument(help="The entry to add.")], user: UserOption = False
    ) -> None:
        """Add an entry (checked like the agent's own writes)."""
        from seam.apps.cli.runner import execute

        execute(add(text, user))

    @memory_app.command("remove")
    def remove_command(
        match: Annotated[str, typer.Argument(help="A substring of exactly one entry.")],
        user: UserOption = False,
    ) -> None:
        """Remove the one entry containing the text."""
        from seam.apps.cli.runner import execute

        execute(remove(match, user))

    register_consolidate(memory_app)

    @memory_app.command("search")
    def search_command(
        query: Annotated[str, typer.Argument(help="What to look for, in any words.")],
        limit: Annotated[int, typer.Option("--limit", min=1, help="At most this many.")] = 10,
    ) -> None:
        """Rank entries of MEMORY.md and USER.md by words and meaning."""
        from seam.apps.cli.runner import execute

        execute(search(query, limit))

    app.add_typer(memory_app, name="memory")
