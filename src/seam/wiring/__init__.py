"""The composition root: the only layer that reads config files, env vars and home paths.

`assemble_runtime` wires what it is handed (the testing seam: it reads nothing);
`create_runtime` builds the rest from the settings and assembles. Both are imported on
first use, so a command that needs only `seam.wiring.settings` does not load the runtime.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seam.wiring.assembly import assemble_runtime
    from seam.wiring.configure import create_runtime
    from seam.wiring.runtime import Runtime

__all__ = ["Runtime", "assemble_runtime", "create_runtime"]


def __getattr__(name: str) -> Any:
    if name == "Runtime":
        from seam.wiring.runtime import Runtime

        return Runtime
    if name == "assemble_runtime":
        from seam.wiring.assembly import assemble_runtime

        return assemble_runtime
    if name == "create_runtime":
        from seam.wiring.configure import create_runtime

        return create_runtime
    raise AttributeError(f"module 'seam.wiring' has no attribute {name!r}")
