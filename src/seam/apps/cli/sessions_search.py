"""`seam sessions search QUERY`: past conversations found by words and by meaning.

Each match is two lines, best first: where it came from (the session's name, its title,
when it was last active, and which signal found it: words, meaning or both), then who
spoke and a snippet. Without search by meaning (the `recall` extra missing, or
`[recall] enabled = false`) the hits are the full-text ones, one line each as before,
and stderr says once why.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from seam.apps.cli.exits import USAGE
from seam.apps.cli.render import Style, shorten
from seam.apps.cli.runner import CliError, open_runtime
from seam.apps.cli.sessions import ROLE_LABELS, when
from seam.contracts.session_recall import RecallHit
from seam.contracts.sessions import SearchHit, SessionInfo

NO_EXTRA = "full text only: install the recall extra for search by meaning"
TURNED_OFF = "full text only: search by meaning is off ([recall] enabled = false)"
TITLE_CHARS = 48

NameOf = Callable[[str], str]


async def search_sessions(query: str, limit: int) -> int:
    if not query.strip():
        raise CliError("the search is empty: give one or more words to look for", USAGE)
    async with open_runtime() as runtime:
        recall = runtime.session_recall()
        if not await recall.by_meaning():
            settings = runtime.settings
            off = settings is not None and not settings.config.recall.enabled
            sys.stderr.write(f"seam: {TURNED_OFF if off else NO_EXTRA}\n")
            hits = await runtime.sessions.search(query, limit)
            _print_words(hits, runtime.session_name_of)
            return 0 if hits else _none(query)
        found = await recall.search(query, limit)
        infos = {f.hit.session_key: await runtime.sessions.get(f.hit.session_key) for f in found}
    if not found:
        return _none(query)
    style = Style.for_stream(sys.stdout)
    for match in found:
        key = match.hit.session_key
        print(_where(runtime.session_name_of(key), infos[key], match, style))
        print("    " + _said(match.hit, style))
    return 0


def _none(query: str) -> int:
    print(f"no matches for {query!r}")
    return 0


def _print_words(hits: list[SearchHit], name_of: NameOf) -> None:
    """The full-text hits as `seam sessions search` always printed them."""
    style = Style.for_stream(sys.stdout)
    for hit in hits:
        print(f"{style.bold(name_of(hit.session_key))}  {_said(hit, style)}")


def _where(name: str, info: SessionInfo | None, match: RecallHit, style: Style) -> str:
    """The session's name, its title, when it was last active, and what found the hit."""
    parts = [style.bold(name)]
    if info is not None and info.title:
        parts.append(style.plain(f"“{shorten(info.title, TITLE_CHARS)}”"))
    if info is not None:
        parts.append(when(info.updated_at))
    parts.append(style.dim(f"({' + '.join(match.signals)})"))
    return "  ".join(parts)


def _said(hit: SearchHit, style: Style) -> str:
    label = ROLE_LABELS.get(hit.role, hit.role)
    return f"{label}: {style.plain(' '.join(hit.snippet.split()))}"
