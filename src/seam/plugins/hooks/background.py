"""What the after-turn hooks share: side-model work started after a turn, so the reply never
waits for it, and the plain text a side model writes."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Generic, TypeVar

from seam.contracts.model import ModelProvider, ModelRequest, TextChunk

T = TypeVar("T")


class BackgroundTasks(Generic[T]):
    """The tasks a hook started and that have not finished yet."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[T]] = set()

    def start(self, work: Coroutine[Any, Any, T], *, name: str) -> asyncio.Task[T]:
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def __len__(self) -> int:
        return len(self._tasks)

    async def drain(self) -> None:
        """Wait for every task, also those started meanwhile."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def aclose(self) -> None:
        """Cancel what is still running."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


async def side_model_text(model: ModelProvider, request: ModelRequest) -> str:
    """The text of the model's answer (a side task asks for no tools)."""
    parts: list[str] = []
    async for chunk in model.stream(request):
        if isinstance(chunk, TextChunk):
            parts.append(chunk.text)
    return "".join(parts)
