"""`seam doctor`'s checks: what is configured, why, and whether each part works.

Each check is a plain `Check` (check.py), so a surface decides how to show it; the pieces
a check examines are built by wiring (`wiring/probes.py`, the store backends, the
sandbox), exactly as `create_runtime` would build them. `seam models` shares the model
endpoint check (providers.py)."""
