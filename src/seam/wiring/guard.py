"""The command guard from settings: the `[guard]` section, the classifier and the gate.

```toml
[guard]
deny = ["git push*", "*terraform apply*"]   # forbidden (matched against each command)
allow = ["make deploy"]                      # safe, unless the hard floor forbids it
approval_timeout = 300                       # seconds to answer; silence: no one was there
```

Globs are matched against the normalised command `seam guard check` prints. Answers the
person gives "always" (or "always deny") are kept in `$SEAM_HOME/approvals.json`.

Seam's own files are protected paths: a command that names `$SEAM_HOME` (approvals,
config, personalities, memory) or the session store is forbidden on every backend, so
the agent can never edit its own controls through a shell.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from seam.contracts.guardrail import Classification, Judge
from seam.plugins.guardrail.approvals import ApprovalCache, ApprovalFileError
from seam.plugins.guardrail.gate import DEFAULT_TIMEOUT, GuardedCommandGate
from seam.wiring.settings import ConfigError, Settings, section_or_defaults
from seam.wiring.skills import skill_places

if TYPE_CHECKING:
    from seam.plugins.guardrail.classifier import CommandClassifier

APPROVALS_FILE = "approvals.json"


def _glob(value: str) -> str:
    if not value.strip():
        raise ValueError("a rule must be a non-empty glob")
    return value


Glob = Annotated[str, AfterValidator(_glob)]


class GuardSection(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # see section_or_defaults

    # Globs of commands that are forbidden (matched against each normalised command).
    deny: list[Glob] = Field(default_factory=list)
    # Globs of commands allowed unasked, unless the hard floor forbids them.
    allow: list[Glob] = Field(default_factory=list)
    # Seconds a person has to answer an approval; silence means no one was there (refused).
    approval_timeout: float = Field(DEFAULT_TIMEOUT, gt=0)


def guard_section(settings: Settings) -> GuardSection:
    try:
        return section_or_defaults(GuardSection, settings.config.guard)
    except ValidationError as exc:
        problems = "; ".join(
            f"guard.{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"{settings.config_path}: {problems}") from None


def protected_paths(settings: Settings) -> tuple[str, ...]:
    """What no command may name: Seam's home first (it stands for `$SEAM_HOME`), then the
    session store (and SQLite's files beside it) when it lives elsewhere."""
    store = str(settings.store_path)
    return (str(settings.home), store, f"{store}-wal", f"{store}-shm", f"{store}-journal")


def build_guardrail(settings: Settings) -> CommandClassifier:
    return _classifier(guard_section(settings), settings)


def deferred_guardrail(settings: Settings) -> DeferredClassifier:
    """`build_guardrail`'s classifier, built when it first classifies a command."""
    return DeferredClassifier(guard_section(settings), settings)


def build_gate(
    settings: Settings, *, judge: Judge | None = None, allow_off: bool = False
) -> GuardedCommandGate:
    """The gate every command-running tool goes through.

    `allow_off`: pass True only for surfaces where a person is at the keyboard (the CLI);
    the default keeps approval mode "off" from applying to chat-gateway personalities.
    """
    section = guard_section(settings)
    try:
        approvals = ApprovalCache(settings.home / APPROVALS_FILE)
    except ApprovalFileError as exc:
        raise ConfigError(str(exc)) from None
    return GuardedCommandGate(
        DeferredClassifier(section, settings),
        approvals,
        judge=judge,
        allow_off=allow_off,
        timeout=section.approval_timeout,
    )


class DeferredClassifier:
    """The gate's `Guardrail`: the command classifier (its shell grammar, program tables
    and rules: about 35 modules) is built when the first command is classified, so a
    turn that runs no command (most one-shots) never loads it."""

    def __init__(self, section: GuardSection, settings: Settings) -> None:
        self._section = section
        self._settings = settings
        self._built: CommandClassifier | None = None

    def classify(self, command: str, *, cwd: str | None = None) -> Classification:
        if self._built is None:
            self._built = _classifier(self._section, self._settings)
        return self._built.classify(command, cwd=cwd)


def _classifier(section: GuardSection, settings: Settings) -> CommandClassifier:
    from seam.plugins.guardrail.classifier import CommandClassifier

    # The person's home, so /home/me/.bashrc is recognised as ~/.bashrc.
    # realpath: a read through a symlink that leaves the working directory is not proven
    # read-only (on the local backend it asks).
    return CommandClassifier(
        deny=section.deny,
        allow=section.allow,
        home=str(Path.home()),
        protected=protected_paths(settings),
        realpath=os.path.realpath,
        # Trusted skills' scripts run unasked, untrusted ones ask (`skill_runs.py`).
        skills=skill_places(settings),
    )
