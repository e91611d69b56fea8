"""Marks tool output that looks like a prompt injection as untrusted data.

Runs on every tool result (web pages, files, command output): flagged content is wrapped
in a delimited block that tells the model it is data, not instructions, invisible
characters are stripped, and the person sees a `notice` event.
"""

from __future__ import annotations

from seam.contracts import hooks
from seam.contracts.hooks import AfterToolCall, HookNotice, HookRegistry, ToolResultChange
from seam.contracts.scanning import InjectionScanner


class InjectionGuard:
    """`scanner`: the injection scanner wiring hands in (`plugins.safety.injection`)."""

    def __init__(self, scanner: InjectionScanner) -> None:
        self.scanner = scanner

    def register(self, registry: HookRegistry) -> None:
        registry.on_modifying(hooks.AFTER_TOOL_RESULT, self.after_tool_result)

    async def after_tool_result(self, payload: AfterToolCall) -> ToolResultChange | None:
        result = payload.result
        findings = self.scanner.scan(result)
        if not findings:
            return None
        name = payload.name
        kinds = ", ".join(sorted({f.kind for f in findings}))
        return ToolResultChange(
            result=self.scanner.wrap_untrusted(result, name, findings),
            notice=HookNotice(
                "injection",
                f"{name} returned content that looks like a prompt injection ({kinds}); it was"
                " marked as untrusted data",
            ),
        )
