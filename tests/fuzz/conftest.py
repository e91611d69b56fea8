"""Hypothesis profiles for the fuzz suite.

`ci` (the default, what `.ci/run` runs): few enough examples that the whole suite takes
well under a minute on a loaded machine. `long`: many more, for a deliberate hunt
(`HYPOTHESIS_PROFILE=long .venv/bin/python -m pytest tests/fuzz`).

Deadlines are off explicitly in both: a per-example deadline fails at random on a shared
two-core machine; the properties that promise bounded time (the guard) measure CPU time
themselves. No example database: the suite writes nothing outside temporary folders.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_COMMON = {
    "deadline": None,
    "database": None,
    "suppress_health_check": (HealthCheck.too_slow, HealthCheck.function_scoped_fixture),
    "print_blob": True,
}
settings.register_profile("ci", max_examples=40, **_COMMON)  # type: ignore[arg-type]
settings.register_profile("long", max_examples=3000, **_COMMON)  # type: ignore[arg-type]
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
