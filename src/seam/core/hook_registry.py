"""The default hook registry: the production one, there is no separate test version."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from seam.contracts.hooks import AnyHook, HookRegistry, ModifyingHook, VoidHook, merge_changes

log = logging.getLogger("seam.hooks")

P = TypeVar("P")
C = TypeVar("C")


class DefaultHookRegistry:
    def __init__(self) -> None:
        # By hook name: `has` on the hot path is one dict lookup.
        self._void: dict[str, list[Callable[[Any], Awaitable[None]]]] = {}
        self._modifying: dict[str, list[Callable[[Any], Awaitable[Any]]]] = {}

    def on_void(self, hook: VoidHook[P], handler: Callable[[P], Awaitable[None]]) -> None:
        self._void.setdefault(hook.name, []).append(handler)

    def on_modifying(
        self, hook: ModifyingHook[P, C], handler: Callable[[P], Awaitable[C | None]]
    ) -> None:
        self._modifying.setdefault(hook.name, []).append(handler)

    def has(self, hook: AnyHook) -> bool:
        name = hook.name
        return name in self._void or name in self._modifying

    async def fire_void(self, hook: VoidHook[P], payload: P) -> None:
        handlers = self._void.get(hook.name)
        if not handlers:
            return
        results = await asyncio.gather(*(h(payload) for h in handlers), return_exceptions=True)
        for handler, result in zip(handlers, results, strict=True):
            if isinstance(result, BaseException):
                if isinstance(result, asyncio.CancelledError):
                    raise result
                log.warning(
                    "void hook %s handler %r failed: %r",
                    hook.name,
                    getattr(handler, "__qualname__", handler),
                    result,
                )

    async def fire_modifying(self, hook: ModifyingHook[P, C], payload: P) -> C | None:
        merged: C | None = None
        for handler in self._modifying.get(hook.name, ()):
            change: C | None = await handler(payload)
            if change is None:
                continue
            merged = change if merged is None else merge_changes(merged, change)
        return merged


async def fire_isolated(hooks: HookRegistry, hook: VoidHook[P], payload: P) -> None:
    """Fire a void hook so that nothing it does, not even a broken registry, stops the
    caller (a cancellation still propagates)."""
    try:
        await hooks.fire_void(hook, payload)
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("void hook %s failed; going on", hook.name)


async def modify_isolated(hooks: HookRegistry, hook: ModifyingHook[P, C], payload: P) -> C | None:
    """Fire a modifying hook; a failure is logged and counts as no change."""
    try:
        return await hooks.fire_modifying(hook, payload)
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("modifying hook %s failed; ignoring its changes", hook.name)
        return None
