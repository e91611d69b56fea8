"""Which working-directory skills the person has trusted, and at which content.

A skill can arrive with a cloned repository, so one found in the working directory is
offered only after `seam skills trust PATH`, which records the folder and a hash of every
file in it (`$SEAM_HOME/skills-trust.json`). Any change to the folder changes the hash,
and the skill is untrusted again until trusted anew.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path


def skill_digest(folder: Path) -> str:
    """sha256 over every file's relative path and bytes (symlinks: their target text)."""
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(folder, followlinks=False):
        dirs.sort()
        for name in sorted(files + [d for d in dirs if (Path(root) / d).is_symlink()]):
            path = Path(root) / name
            relative = path.relative_to(folder).as_posix()
            digest.update(relative.encode() + b"\0")
            if path.is_symlink():
                digest.update(b"link:" + str(path.readlink()).encode() + b"\0")
            else:
                digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


class TrustStore:
    """`{folder: digest}` in a JSON file; a missing or unreadable file trusts nothing."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {str(k): str(v) for k, v in data.items()}

    def trusted(self, folder: Path) -> bool:
        recorded = self.load().get(str(folder.resolve()))
        if recorded is None:
            return False
        try:
            return recorded == skill_digest(folder)
        except OSError:
            return False

    def trust(self, folder: Path) -> str:
        """Record `folder` at its current content; returns the digest."""
        folder = folder.resolve()
        digest = skill_digest(folder)
        data = self.load()
        data[str(folder)] = digest
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(self.path.name + ".tmp")
        temporary.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        temporary.replace(self.path)
        return digest
