"""What the web backend refuses, by kind: `errors.py` turns each into its HTTP status
(404, 409, 400), so the backend never speaks HTTP itself."""

from __future__ import annotations


class NotFound(LookupError):
    pass


class Conflict(ValueError):
    pass


class Invalid(ValueError):
    pass


__all__ = ["Conflict", "Invalid", "NotFound"]
