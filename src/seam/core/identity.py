"""Session identity: the durable address of a session in every store.

The key format is part of the durable contract (tests pin the exact string):
`agent-session:["<tenant>","<harness>","<name>"]`. `task:` names are reserved for child
sessions, so a public name with that prefix is rejected rather than silently shadowing
a subagent's transcript.
"""

from __future__ import annotations

import json
from functools import lru_cache

SESSION_STORAGE_PREFIX = "agent-session:"
DEFAULT_HARNESS = "default"
TASK_PREFIX = "task:"
MAX_NAME_LENGTH = 200
# Keys made and parsed, remembered (both are pure): every turn makes its session's key
# and several places parse it, each a JSON round trip otherwise.
KEYS_REMEMBERED = 4096


class InvalidSessionName(ValueError):
    pass


@lru_cache(maxsize=KEYS_REMEMBERED)
def create_session_storage_key(tenant: str, harness: str, session: str) -> str:
    return SESSION_STORAGE_PREFIX + json.dumps(
        [tenant, harness, session], separators=(",", ":"), ensure_ascii=False
    )


def tenant_key_prefix(tenant: str) -> str:
    """What every storage key of `tenant`'s sessions starts with (and no other's)."""
    return create_session_storage_key(tenant, "", "").rsplit(",", 2)[0] + ","


@lru_cache(maxsize=KEYS_REMEMBERED)
def parse_session_storage_key(key: str) -> tuple[str, str, str]:
    """The (tenant, harness, name) a key was made from; ValueError for anything else."""
    if not key.startswith(SESSION_STORAGE_PREFIX):
        raise ValueError(f"not a session key: {key!r}")
    try:
        parts = json.loads(key[len(SESSION_STORAGE_PREFIX) :])
    except json.JSONDecodeError:
        raise ValueError(f"not a session key: {key!r}") from None
    if not (isinstance(parts, list) and len(parts) == 3 and all(isinstance(p, str) for p in parts)):
        raise ValueError(f"not a session key: {key!r}")
    return parts[0], parts[1], parts[2]


def create_task_session_name(parent_session: str, task_id: str) -> str:
    return f"{TASK_PREFIX}{parent_session}:{task_id}"


def assert_public_session_name(name: str) -> str:
    if not name or not name.strip():
        raise InvalidSessionName("a session name cannot be empty")
    if name.startswith(TASK_PREFIX):
        raise InvalidSessionName(
            f"session name {name!r} starts with {TASK_PREFIX!r}, which is reserved for subagent"
            " sessions; pick another name"
        )
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidSessionName(f"session name is longer than {MAX_NAME_LENGTH} characters")
    if any(ord(c) < 32 for c in name):
        raise InvalidSessionName(f"session name {name!r} contains control characters")
    return name
