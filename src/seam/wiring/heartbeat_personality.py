"""The heartbeat personality as the settings describe it: the light half of `heartbeat`.

Every runtime built from the settings offers the lean `heartbeat` personality (so any
worker runs a beat the same way), which needs only the checklist's path and the
`[heartbeat]` section; the beat itself, its schedule and its delivery (`heartbeat`) are
imported by what runs a beat, not by every `seam run`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from seam.contracts.personality import PersonalityRegistry
from seam.plugins.heartbeat.personality import HeartbeatPersonalities
from seam.wiring.delivery_settings import HeartbeatSection
from seam.wiring.settings import Settings

CHECKLIST_FILE = "HEARTBEAT.md"


def section(settings: Settings) -> HeartbeatSection:
    return settings.config.heartbeat


def base_personality(settings: Settings) -> str:
    return section(settings).personality or settings.config.agent.personality


def checklist_path(settings: Settings, personality_id: str | None = None) -> Path:
    """The checklist a beat reads: the personality's own, else the home's."""
    own = settings.personalities_dir / (personality_id or base_personality(settings))
    if (own / CHECKLIST_FILE).is_file():
        return own / CHECKLIST_FILE
    return settings.home / CHECKLIST_FILE


def checklist_reader(settings: Settings) -> Callable[[str], str | None]:
    def read(personality_id: str) -> str | None:
        try:
            return checklist_path(settings, personality_id).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    return read


def with_heartbeat(
    personalities: PersonalityRegistry, settings: Settings
) -> HeartbeatPersonalities:
    """`personalities` plus the lean `heartbeat` one (in every runtime built from the
    settings, so any worker runs a beat the same way)."""
    hb = section(settings)
    return HeartbeatPersonalities(
        personalities,
        checklist_reader(settings),
        base=hb.personality or None,
        tools=hb.tools,
    )
