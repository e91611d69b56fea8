"""The modules a one-shot `seam run` imports, as `tests/cli/imports_seam_run.txt` lists
them, and how they are measured (shared by the test and `scripts/seam-run-imports`).

`seam run` runs as a process of its own against the loopback OpenAI server (a fake model
that answers "Hello"), with a fresh HOME and SEAM_HOME in a project folder; its
`sys.modules` is read at exit, less what bare Python imports at start-up here (site,
`.pth` files), so the list is Seam's and its dependencies' alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.support.openai_server import OpenAIServer, text_reply

LIST = Path(__file__).resolve().parent.parent / "cli" / "imports_seam_run.txt"
HEADER = (
    "# The modules a one-shot `seam run` imports (Python's own start-up modules left out).\n"
    "# tests/cli/test_imports_seam_run.py fails when one is added; regenerate with\n"
    "# scripts/seam-run-imports once the new import is meant (see docs/benchmarks.md).\n"
)
_PROBE = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + ' '.join(sys.modules) + '\\n'))\n"
    "from seam.apps.cli.entry import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def _modules(argv: list[str], env: dict[str, str], cwd: str) -> set[str]:
    done = subprocess.run(
        argv, env=env, cwd=cwd, capture_output=True, encoding="utf-8", timeout=60, check=False
    )
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("MODULES ")]
    if done.returncode or not lines:
        raise RuntimeError(f"the probe failed ({done.returncode}): {done.stderr[-2000:]}")
    return set(lines[-1].split()[1:])


def seam_run_modules() -> list[str]:
    """What `seam run "hi"` imports beyond bare Python's start-up, sorted."""
    used, start = probe_modules()
    return sorted(used - start - {"__main__"})


def loopback_env(home: str, base_url: str) -> dict[str, str]:
    """This environment less its provider and Seam settings, with HOME and SEAM_HOME in
    `home` and the OpenAI provider at `base_url`. PYTHONDONTWRITEBYTECODE (set in some
    sandboxes) would make every run compile every module: users have bytecode caches."""
    skipped = ("OPENAI_", "SEAM_", "ANTHROPIC_", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(skipped)}
    env.update(
        HOME=home,
        SEAM_HOME=str(Path(home) / ".seam"),
        OPENAI_BASE_URL=base_url,
        OPENAI_API_KEY="bench-key",
    )
    return env


def probe_modules() -> tuple[set[str], set[str]]:
    """`sys.modules` at the end of a `seam run "hi"`, and at bare Python's start-up."""
    with tempfile.TemporaryDirectory() as tmp, OpenAIServer() as server:
        env = loopback_env(tmp, server.base_url)
        project = Path(tmp) / "project"
        project.mkdir()
        server.push(text_reply("Hello"))
        run = [sys.executable, "-c", _PROBE, "run", "--session", "imports", "hi"]
        used = _modules(run, env, str(project))
        bare = [
            sys.executable,
            "-c",
            "import sys; sys.stderr.write('MODULES ' + ' '.join(sys.modules))",
        ]
        start = _modules(bare, env, str(project))
    return used, start


def listed() -> list[str]:
    """The committed list (comments and blank lines left out)."""
    lines = LIST.read_text(encoding="utf-8").splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]


def write_list(modules: list[str]) -> None:
    LIST.write_text(HEADER + "\n".join(modules) + "\n", encoding="utf-8")
