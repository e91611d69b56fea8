"""What `seam serve` is built from: the configured runtime, the `[web]` section and the
personalities' folder (`build_web_deps`); `apps/web/backend.py` drives them.

It also hands the web surface the lower layers' parts it uses (surfaces reach core and
plugins only through wiring): the event hub and session streams, the approval log, the
tenant-aware session names, and the personality files' check.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from seam.core.approval_log import approval_state
from seam.core.session_stream import EventHub, follow_session
from seam.core.tenants import session_name, tenant_session_key, tenant_session_name
from seam.plugins.personalities.check import personality_problem
from seam.wiring.runtime import Runtime
from seam.wiring.settings import Settings
from seam.wiring.web_keys import WebSection, web_section


@dataclass(frozen=True)
class WebDeps:
    """What the web backend is made of."""

    runtime: Runtime
    config: WebSection
    # Where the page's personality edits are written (None: not editable).
    personalities_dir: Path | None


def build_web_deps(settings: Settings) -> WebDeps:
    """What `seam serve` runs: the configured runtime and the `[web]` section."""
    from seam.wiring.runtime import create_runtime

    runtime = create_runtime(settings)
    return WebDeps(runtime, web_section(settings), settings.personalities_dir)


__all__ = [
    "EventHub",
    "WebDeps",
    "approval_state",
    "build_web_deps",
    "follow_session",
    "personality_problem",
    "session_name",
    "tenant_session_key",
    "tenant_session_name",
]
