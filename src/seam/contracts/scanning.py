"""What a plugin that screens text needs from the safety scanners, as contracts: an
`InjectionScanner` (finds prompt-injection patterns, fences flagged text as data) and a
`Redactor` (replaces secrets). The scanners live in `plugins.safety`; wiring hands them
to the plugins that use them (the injection guard, memory), so plugin families never
import each other.

The defaults here are the empty stack: `NO_INJECTION_SCANNER` finds nothing and
`NO_REDACTOR` changes nothing, real objects a test or an embedder can run with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    excerpt: str  # the matching text, cut short


@runtime_checkable
class InjectionScanner(Protocol):
    def scan(self, text: str) -> Sequence[Finding]:
        """Findings in `text`, empty for clean text."""
        ...

    def wrap_untrusted(self, text: str, source: str, findings: Sequence[Finding]) -> str:
        """`text` fenced as data from `source`; unchanged when `findings` is empty."""
        ...


@runtime_checkable
class Redactor(Protocol):
    def redact(self, text: str) -> str:
        """`text` with each secret replaced; the same object when there is none."""
        ...


class NoInjectionScanner:
    """Finds nothing: text passes as it is."""

    def scan(self, text: str) -> Sequence[Finding]:
        return ()

    def wrap_untrusted(self, text: str, source: str, findings: Sequence[Finding]) -> str:
        return text


class NoRedactor:
    """Redacts nothing."""

    def redact(self, text: str) -> str:
        return text


NO_INJECTION_SCANNER = NoInjectionScanner()
NO_REDACTOR = NoRedactor()
