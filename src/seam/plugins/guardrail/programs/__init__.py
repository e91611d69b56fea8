"""The allowlist's checks, one module per family of programs."""
