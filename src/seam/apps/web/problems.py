"""What the web backend refuses, by kind: `errors.py` turns each into its HTTP status
(404, 409, 400, 403), so the backend never speaks HTTP itself."""

from __future__ import annotations


class NotFound(LookupError):
    pass


class Conflict(ValueError):
    pass


class Invalid(ValueError):
    pass


class Forbidden(PermissionError):
    """The caller may not do this (a tenant touching what is the owner's alone)."""


__all__ = ["Conflict", "Forbidden", "Invalid", "NotFound"]
