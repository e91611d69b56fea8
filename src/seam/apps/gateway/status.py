"""The gateway's status file, `$SEAM_HOME/gateway-status.json`: each supervisor writes its
adapter's state every few seconds; `seam doctor` reads it.

Several gateways share one home (each holds some adapters, the others stand by), so a
write merges this process's entries into the file under a lock, atomically.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from seam.wiring.settings import Settings

STATUS_FILE = "gateway-status.json"


def status_path(settings: Settings) -> Path:
    return settings.home / STATUS_FILE


def write_status(path: Path, adapters: Mapping[str, Mapping[str, Any]]) -> None:
    """Merge this process's view of `adapters` into the status file (other processes
    write the adapters they hold), atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        merged = dict(read_status(path).get("adapters", {}))
        for name, entry in adapters.items():
            if not _hides_holder(entry, merged.get(name)):
                merged[name] = dict(entry)
        tmp = path.with_suffix(".tmp")
        body = json.dumps({"updated_at": time.time(), "adapters": merged}, indent=2)
        tmp.write_text(body + "\n", encoding="utf-8")
        tmp.replace(path)
    finally:
        os.close(lock_fd)


def _hides_holder(entry: Mapping[str, Any], old: Mapping[str, Any] | None) -> bool:
    """A standby's view never hides a holder's fresh one (another process's)."""
    return (
        entry.get("state") == "standby"
        and old is not None
        and old.get("state") != "standby"
        and old.get("updated_at", 0) > time.time() - 30
        and old.get("pid") != os.getpid()
    )


def read_status(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
