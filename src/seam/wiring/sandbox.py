"""The sandbox backend from settings: bubblewrap when it works here, else subprocesses."""

from __future__ import annotations

from typing import Any

from seam.contracts.sandbox import Sandbox, SandboxProvider
from seam.contracts.storage import Reach
from seam.services.sandbox.bwrap import BwrapSandboxProvider, bwrap_available
from seam.services.sandbox.local import LocalSandboxProvider
from seam.services.sandbox.process import SandboxOptions
from seam.wiring.settings import ConfigError, Settings


def build_sandboxes(settings: Settings) -> SandboxProvider:
    section = settings.config.sandbox
    options = SandboxOptions(timeout=section.timeout)
    # Commands see a filtered copy of this environment: the sandbox drops secrets.
    base_env = settings.env
    backend = section.backend
    # Probing bubblewrap starts a short subprocess: do it at most once.
    available = backend != "local" and bwrap_available()
    if backend == "bwrap" and not available:
        raise ConfigError(
            f"[sandbox] backend = 'bwrap' in {settings.config_path}, but bubblewrap is not"
            " installed or cannot create namespaces here (apt-get install bubblewrap)"
        )
    if available:
        return BwrapSandboxProvider(base_env=base_env, options=options)
    return LocalSandboxProvider(base_env=base_env, options=options)


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
        deferred = _Deferred(self, session_key, working_dir, network, reach)
        return deferred

    async def aclose(self) -> None:
        if self._provider is not None:
            await self._provider.aclose()


class _Deferred:
    """A session's sandbox, resolved when a tool first uses it."""

    def __init__(
        self, owner: LazySandboxes, key: str, working_dir: str, network: bool, reach: Reach | None
    ) -> None:
        self._owner = owner
        self._key = key
        self._network = network
        self._reach = reach
        self.working_dir = working_dir

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


BACKEND_NOTES = {
    "bwrap": "bubblewrap: commands see only the working dir and the reach; $SEAM_HOME,"
    " the home's dotfiles and credentials stay out",
    "local": "local: NO isolation; every command needs approval unless the guard proves it"
    " read-only (install bubblewrap for isolation)",
}


def sandbox_backend(sandboxes: object) -> str | None:
    """The backend name of a runtime's sandbox provider, or None when it has none."""
    if sandboxes is None:
        return None
    backend = getattr(sandboxes, "backend", None) or getattr(sandboxes, "name", None)
    return str(backend) if backend else "custom"


def describe_backend(backend: str | None) -> str:
    """One line for the chat banner and `seam doctor`: which backend, and what it means."""
    if backend is None:
        return "none: commands cannot run"
    return BACKEND_NOTES.get(backend, backend)


def runtime_sandbox(runtime: Any) -> tuple[str, bool]:
    """What a surface shows about a runtime's sandbox: the `describe_backend` line, and
    whether commands are isolated. Picks the backend now if no command has yet."""
    try:
        backend = sandbox_backend(runtime.loop.sandboxes)
    except ConfigError as exc:  # [sandbox] backend = "bwrap" where it cannot run
        return f"unavailable: {exc}", False
    return describe_backend(backend), backend == "bwrap"
