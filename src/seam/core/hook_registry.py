"""The default hook registry: the production one, there is no separate test version."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from seam.contracts.hooks import (
    ClaimingHandler,
    ClaimResult,
    ModifyingHandler,
    Payload,
    VoidHandler,
)

log = logging.getLogger("seam.hooks")


class DefaultHookRegistry:
    def __init__(self) -> None:
        self._void: dict[str, list[VoidHandler]] = {}
        self._modifying: dict[str, list[ModifyingHandler]] = {}
        self._claiming: dict[str, list[ClaimingHandler]] = {}

    def on_void(self, name: str, handler: VoidHandler) -> None:
        self._void.setdefault(name, []).append(handler)

    def on_modifying(self, name: str, handler: ModifyingHandler) -> None:
        self._modifying.setdefault(name, []).append(handler)

    def on_claiming(self, name: str, handler: ClaimingHandler) -> None:
        self._claiming.setdefault(name, []).append(handler)

    def has(self, name: str) -> bool:
        return name in self._void or name in self._modifying or name in self._claiming

    async def fire_void(self, name: str, payload: Payload) -> None:
        handlers = self._void.get(name)
        if not handlers:
            return
        results = await asyncio.gather(*(h(payload) for h in handlers), return_exceptions=True)
        for handler, result in zip(handlers, results, strict=True):
            if isinstance(result, BaseException):
                if isinstance(result, asyncio.CancelledError):
                    raise result
                log.warning(
                    "void hook %s handler %r failed: %r",
                    name,
                    getattr(handler, "__qualname__", handler),
                    result,
                )

    async def fire_modifying(self, name: str, payload: Payload) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for handler in self._modifying.get(name, ()):
            change = await handler(payload)
            if not change:
                continue
            for key, value in change.items():
                if value is not None and key not in merged:
                    merged[key] = value
        return merged

    async def fire_claiming(self, name: str, payload: Payload) -> ClaimResult | None:
        for handler in self._claiming.get(name, ()):
            result = await handler(payload)
            if result is not None and result.handled:
                return result
        return None
