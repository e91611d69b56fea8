"""The session and submission a log record belongs to, for structured logs.

The Coordinator sets them around each claim; wiring's JSON log formatter reads them, so
every line logged while a turn runs (by the loop, a tool, a provider) names its turn
without each call site passing them. A context variable: concurrent turns in one
process each see their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from types import MappingProxyType

NO_FIELDS: Mapping[str, str] = MappingProxyType({})
LOG_FIELDS: ContextVar[Mapping[str, str]] = ContextVar("seam_log_fields", default=NO_FIELDS)
