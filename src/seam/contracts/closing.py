"""`async with` for objects that are closed by `aclose()`.

Stores, deliverers and runtimes are opened in different ways, but all of them end the
same way: leaving the block closes the object, whether it was left normally or by an
exception. The mixin writes that exit once.
"""

from __future__ import annotations

from types import TracebackType


class ClosesOnExit:
    """Mixed in by a class with `aclose()`; its `__aenter__` stays its own."""

    async def aclose(self) -> None:
        raise NotImplementedError

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
