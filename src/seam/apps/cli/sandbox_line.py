"""What the chat banner and `seam doctor` say of the sandbox: the backend commands run
under, its limits, and what that means for the person."""

from __future__ import annotations

from typing import Any

from seam.wiring.sandbox import UNAVAILABLE, SandboxSection, sandbox_limits


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


def runtime_sandbox(runtime: Any) -> tuple[str, bool]:
    """What a surface shows about a runtime's sandbox: the `describe_backend` line, and
    whether commands are isolated. Picks the backend now if no command has yet."""
    from seam.wiring.sandbox import runtime_sandbox_facts

    backend, section, network = runtime_sandbox_facts(runtime)
    return describe_backend(backend, section, network), backend == "bwrap"
