"""Marks tool output that looks like a prompt injection as untrusted data.

Runs on every tool result (web pages, files, command output): flagged content is wrapped
in a delimited block that tells the model it is data, not instructions, invisible
characters are stripped, and the person sees a `notice` event.
"""

from __future__ import annotations

from seam.contracts import hooks
from seam.contracts.hooks import AfterToolCall, HookNotice, HookRegistry, ToolResultChange
from seam.plugins.safety.injection import scan, wrap_untrusted


class InjectionGuard:
    def register(self, registry: HookRegistry) -> None:
        registry.on_modifying(hooks.AFTER_TOOL_RESULT, self.after_tool_result)

    async def after_tool_result(self, payload: AfterToolCall) -> ToolResultChange | None:
        result = payload.result
        findings = scan(result)
        if not findings:
            return None
        name = payload.name
        kinds = ", ".join(sorted({f.kind for f in findings}))
        return ToolResultChange(
            result=wrap_untrusted(result, name, findings),
            notice=HookNotice(
                "injection",
                f"{name} returned content that looks like a prompt injection ({kinds}); it was"
                " marked as untrusted data",
            ),
        )
