"""`seam chat` indexes for search by meaning while the person types.

Between turns the chat waits for a line; that is when new messages (the turn just
answered, and at the start whatever history is not indexed yet) get their vectors, in a
worker thread, so a later `session_search` or `seam sessions search` has little left to
do. Only at a terminal: a chat fed from a pipe answers and ends, and its messages are
indexed by the next search instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seam.wiring.runtime import Runtime

log = logging.getLogger("seam.recall")


class IdleIndexer:
    """One indexing pass at a time, started whenever the chat waits for input."""

    def __init__(self) -> None:
        self._task: asyncio.Task[Any] | None = None

    def poke(self, runtime: Runtime) -> None:
        """Index what is new, unless a pass is still running (it will see it)."""
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(_index(runtime))

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task


async def _index(runtime: Runtime) -> None:
    settings = runtime.settings
    if settings is not None and not settings.config.recall.enabled:
        return
    try:
        await runtime.session_recall().index_pending()
    except Exception:  # upkeep: a store that is closing or busy is tried next time
        log.debug("could not index messages for search by meaning", exc_info=True)
