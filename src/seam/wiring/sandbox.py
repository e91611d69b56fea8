"""The sandbox backend from settings: bubblewrap when it works here, else subprocesses."""

from __future__ import annotations

from seam.contracts.sandbox import SandboxProvider
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
