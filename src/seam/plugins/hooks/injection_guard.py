"""Marks tool output that looks like a prompt injection as untrusted data.

Runs on every tool result (web pages, files, command output): flagged content is wrapped
in a delimited block that tells the model it is data, not instructions, invisible
characters are stripped, and the person sees a `notice` event.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seam.contracts import hooks as hook_names
from seam.contracts.hooks import HookRegistry
from seam.plugins.safety.injection import scan, wrap_untrusted


class InjectionGuard:
    def register(self, hooks: HookRegistry) -> None:
        hooks.on_modifying(hook_names.AFTER_TOOL_RESULT, self.after_tool_result)

    async def after_tool_result(self, payload: Mapping[str, Any]) -> dict[str, Any] | None:
        result = str(payload.get("result", ""))
        findings = scan(result)
        if not findings:
            return None
        name = str(payload.get("name", "tool"))
        kinds = ", ".join(sorted({f.kind for f in findings}))
        return {
            "result": wrap_untrusted(result, name, findings),
            "notice": (
                "injection",
                f"{name} returned content that looks like a prompt injection ({kinds}); it was"
                " marked as untrusted data",
            ),
        }
