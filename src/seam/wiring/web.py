"""What `seam serve` is built from: the configured runtime, the `[web]` section and the
personalities' folder (`build_web_deps`); `apps/web/backend.py` drives them.

It also hands the web surface the lower layers' parts it uses (surfaces reach core and
plugins only through wiring): the event hub and session streams, the approval log, the
tenant-aware session names, the running turn's log fields (whose retry a provider
reports), the personality files' check, and a tenant's own files
(`tenant_dir`, `tenant_memory`: the owner's checks and limits over a folder of the
tenant's; `TENANT_KEYS` and `tenant_ref_problem`: what its personality may set).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from seam.contracts.model import OnRetry
from seam.core.approval_log import approval_state
from seam.core.log_fields import LOG_FIELDS
from seam.core.session_stream import EventHub, follow_session
from seam.core.tenants import session_name, tenant_session_key, tenant_session_name
from seam.plugins.personalities.check import personality_problem
from seam.plugins.personalities.tenant import TENANT_KEYS, tenant_ref_problem
from seam.wiring.memory import tenant_memory
from seam.wiring.runtime import Runtime
from seam.wiring.settings import Settings
from seam.wiring.tenant_dirs import TENANTS_DIR, tenant_dir
from seam.wiring.web_keys import WebSection, web_section


@dataclass(frozen=True)
class WebDeps:
    """What the web backend is made of."""

    runtime: Runtime
    config: WebSection
    # Where the page's personality edits are written (None: not editable).
    personalities_dir: Path | None
    # Where each tenant's own personality overrides and memory live, one folder each.
    tenants_dir: Path | None = None
    # Whether a personality's model sees images (`vision.py`); None: none does.
    sees_images: Callable[[str], bool] | None = None


def build_web_deps(settings: Settings, on_retry: OnRetry | None = None) -> WebDeps:
    """What `seam serve` runs: the configured runtime and the `[web]` section.
    `on_retry` hears of each retry the runtime's models make (the page shows them)."""
    from seam.wiring.configure import create_runtime
    from seam.wiring.vision import vision_check

    runtime = create_runtime(settings, on_retry=on_retry)
    tenants = settings.home / TENANTS_DIR
    vision = vision_check(settings, runtime.personalities)
    return WebDeps(runtime, web_section(settings), settings.personalities_dir, tenants, vision)


__all__ = [
    "LOG_FIELDS",
    "TENANTS_DIR",
    "TENANT_KEYS",
    "EventHub",
    "WebDeps",
    "approval_state",
    "build_web_deps",
    "follow_session",
    "personality_problem",
    "session_name",
    "tenant_dir",
    "tenant_memory",
    "tenant_ref_problem",
    "tenant_session_key",
    "tenant_session_name",
]
