"""What the chat banner and `seam doctor` say of the sandbox: the backend commands run
under, its limits, and what that means for the person."""

from __future__ import annotations

from typing import Any

from seam.wiring.sandbox import UNAVAILABLE, SandboxSection, sandbox_limits


def sandbox_backend(sandboxes: object) -> str | None:
    """The backend name of a runtime's sandbox provider, or None when it has none."""
    if sandboxes is None:
        return None
    backend = getattr(sandboxes, "backend", None) or getattr(sandboxes, "name", None)
    return str(backend) if backend else "custom"


def describe_backend(backend: str | None, section: SandboxSection, network: bool | None) -> str:
    """One line for the chat banner and `seam doctor`: the backend, its limits, and what
    it means. `network`: the default personality's setting (None: not known)."""
    if backend is None:
        return "none: commands cannot run"
    if backend == "local":
        return "local — no isolation; every command not proven read-only asks"
    if backend == "unavailable":
        return f"unavailable: {UNAVAILABLE}, so every command is refused"
    if backend != "bwrap":
        return backend
    if network is None:
        net = "network per personality"
    else:
        net = "network on (public addresses only)" if network else "network off"
    return f"bwrap ({sandbox_limits(section).describe()}, {net})"


def _default_network(runtime: Any) -> bool | None:
    """Whether the runtime's default personality lets commands use the network."""
    try:
        personality = runtime.personalities.get(runtime.settings.config.agent.personality)
        return bool(personality.network)
    except Exception:  # a broken personality file: `seam doctor` names it separately
        return None


def runtime_sandbox(runtime: Any) -> tuple[str, bool]:
    """What a surface shows about a runtime's sandbox: the `describe_backend` line, and
    whether commands are isolated. Picks the backend now if no command has yet."""
    backend = sandbox_backend(runtime.loop.sandboxes)
    settings = runtime.settings
    section = settings.config.sandbox if settings is not None else SandboxSection.model_validate({})
    line = describe_backend(backend, section, _default_network(runtime))
    return line, backend == "bwrap"
