"""Checkpoints of a working directory in a shadow git repository (issue #24).

The stable API is the `CheckpointEngine` protocol in `seam.contracts.checkpoints`; this
package's `ShadowCheckpoints` implements it:

    from seam.contracts.checkpoints import CheckpointSettings
    from seam.services.checkpoints import ShadowCheckpoints

    engine = ShadowCheckpoints(seam_home / "checkpoints", CheckpointSettings(),
                               base_env=os.environ)
    cp = await engine.snapshot(work_dir, session_key=key)          # -> commit id
    diff = await engine.diff(work_dir, cp)                          # to the dir now
    diff = await engine.diff(work_dir, cp, later)                   # between two ids
    await engine.restore(work_dir, cp, [c.path for c in diff.changes])
    await engine.disk_usage(); await engine.sessions()
    await engine.prune([key]); await engine.prune_to_budget(keep=[key])

- `engine.py`: the engine (one repository per directory, a lock per repository);
- `repo.py`: one shadow repository: snapshot, diff, refs per session;
- `restore.py`: byte-exact restore of chosen paths;
- `git.py`: the git subprocess, with a scrubbed environment and no user config.
"""

from seam.services.checkpoints.engine import ShadowCheckpoints

__all__ = ["ShadowCheckpoints"]
