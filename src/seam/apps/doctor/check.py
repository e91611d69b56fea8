"""One line of `seam doctor`: a named part, whether it works, and the fix when not."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Check:
    """`hint` is the fix, shown beside a failed check."""

    name: str
    ok: bool
    detail: str
    hint: str = ""


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """Every check; `config_ok` False when the config could not be read (the checks
    after it were not run, and the command exits as for bad usage)."""

    checks: list[Check]
    config_ok: bool

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)
