"""The sandbox backend from settings: bubblewrap whenever it can run here.

`auto` (the default) and `bwrap` pick bubblewrap when `bwrap_available()`; where it cannot
run, commands are refused with the fix (services/sandbox/unavailable.py), never run on
the host unasked. Only `backend = "local"`, chosen explicitly, runs them unisolated, and
the banner and `seam doctor` say so (apps/cli/sandbox_line.py). The `[sandbox]` limits
apply to both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from seam.contracts.sandbox import Sandbox, SandboxProvider
from seam.contracts.storage import Reach
from seam.wiring.settings import SandboxSection, Settings

if TYPE_CHECKING:
    from seam.services.sandbox.limits import Limits

__all__ = [
    "UNAVAILABLE",
    "LazySandboxes",
    "SandboxSection",
    "build_sandboxes",
    "runtime_sandbox_facts",
    "sandbox_backend",
    "sandbox_limits",
]

UNAVAILABLE = "bubblewrap is not installed or cannot create namespaces here"


def sandbox_limits(section: SandboxSection) -> Limits:
    from seam.services.sandbox.limits import Limits

    return Limits(
        memory_mb=section.memory_mb,
        max_processes=section.max_processes,
        max_file_mb=section.max_file_mb,
        cpu_seconds=section.cpu_seconds,
    )


def build_sandboxes(settings: Settings) -> SandboxProvider:
    """The backend the settings ask for. Its modules (about a dozen) are imported here,
    not with this module: `LazySandboxes` calls this on a session's first command."""
    from seam.services.sandbox.bwrap import BwrapSandboxProvider
    from seam.services.sandbox.local import LocalSandboxProvider
    from seam.services.sandbox.process import SandboxOptions
    from seam.services.sandbox.unavailable import UnavailableSandboxProvider

    section = settings.config.sandbox
    options = SandboxOptions(timeout=section.timeout, limits=sandbox_limits(section))
    # Commands see a filtered copy of this environment: the sandbox drops secrets.
    base_env = settings.env
    if section.backend == "local":
        return LocalSandboxProvider(base_env=base_env, options=options)
    # Probing bubblewrap starts a short subprocess: callers do this at most once.
    if not bwrap_available():
        return UnavailableSandboxProvider(UNAVAILABLE)
    # Trusted skills' scripts must run (at /skills/<name>), though $SEAM_HOME stays out.
    from seam.wiring.skills import trusted_skill_folders

    return BwrapSandboxProvider(
        base_env=base_env,
        options=options,
        network_allow=tuple(section.network_allow),
        skills=trusted_skill_folders(settings),
    )


def bwrap_available() -> bool:
    """Whether bubblewrap can run here (`services.sandbox.bwrap`, imported on first use)."""
    from seam.services.sandbox.bwrap import bwrap_available as probe

    return probe()


class LazySandboxes:
    """Picks and builds the backend on a session's first command, not at start-up:
    probing bubblewrap starts a subprocess, and most turns run no command at all."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._provider: SandboxProvider | None = None

    def provider(self) -> SandboxProvider:
        if self._provider is None:
            self._provider = build_sandboxes(self._settings)
        return self._provider

    @property
    def backend(self) -> str:
        """The backend in force ("bwrap" or "local"); picks it now if not picked yet."""
        return str(getattr(self.provider(), "name", "sandbox"))

    def for_session(
        self, session_key: str, *, working_dir: str, network: bool, reach: Reach | None = None
    ) -> Sandbox:
        return _Deferred(self, session_key, working_dir, network, reach)

    async def aclose(self) -> None:
        if self._provider is not None:
            await self._provider.aclose()


@dataclass(eq=False)
class _Deferred:
    """A session's sandbox, resolved when a tool first uses it."""

    # Private, so none hides an attribute of the real sandbox (`__getattr__`).
    _owner: LazySandboxes
    _key: str
    working_dir: str
    _network: bool
    _reach: Reach | None

    def _real(self) -> Sandbox:
        return self._owner.provider().for_session(
            self._key, working_dir=self.working_dir, network=self._network, reach=self._reach
        )

    @property
    def name(self) -> str:
        return self._real().name

    def __getattr__(self, attribute: str) -> Any:
        # run, start, processes, poll, kill, aclose: all belong to the real sandbox.
        return getattr(self._real(), attribute)


def sandbox_backend(sandboxes: object) -> str | None:
    """The backend name of a runtime's sandbox provider, or None when it has none."""
    if sandboxes is None:
        return None
    backend = getattr(sandboxes, "backend", None) or getattr(sandboxes, "name", None)
    return str(backend) if backend else "custom"


def _default_network(runtime: Any) -> bool | None:
    """Whether the runtime's default personality lets commands use the network."""
    try:
        personality = runtime.personalities.get(runtime.settings.config.agent.personality)
        return bool(personality.network)
    except Exception:  # a broken personality file: `seam doctor` names it separately
        return None


def runtime_sandbox_facts(runtime: Any) -> tuple[str | None, SandboxSection, bool | None]:
    """A runtime's sandbox backend (picked now if no command has yet), its `[sandbox]`
    section, and whether its default personality lets commands use the network (None:
    not known): what the chat banner describes (apps/cli/sandbox_line.py)."""
    backend = sandbox_backend(runtime.loop.sandboxes)
    settings = runtime.settings
    section = settings.config.sandbox if settings is not None else SandboxSection.model_validate({})
    return backend, section, _default_network(runtime)
