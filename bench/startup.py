"""Start-up cost of the `seam` command, next to bare Python (and Hermes Agent).

Wall and CPU time of whole subprocesses (median of N runs): `python -c pass`, `import seam`,
`seam --version`, `seam --help`, and a one-shot `seam run` answered by an in-process
loopback OpenAI server; then the modules that one-shot imports and its peak RSS. With
Hermes Agent installed in a virtualenv of its own (`--hermes DIR/bin/hermes`, default
the one `SEAM_BENCH_PEER_PYTHON` names, as `bench/all.py` sets it), its one-shot
(`hermes -z`, its config pointing at the same server) against the same server. Run:

    .venv/bin/python bench/startup.py [--runs 15] [--hermes PATH]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.support.imports import loopback_env, probe_modules  # noqa: E402
from tests.support.openai_server import OpenAIServer, text_reply  # noqa: E402

PYTHON = sys.executable
SEAM = str(Path(sys.executable).with_name("seam"))


def wall_ms(
    argv: Sequence[str], env: dict[str, str], cwd: str, runs: int, before: Callable[[], None]
) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system of the command and its
    children) in ms, after one untimed warm-up run (disk cache, first-run setup). On a
    loaded machine the wall time is mostly waiting for a core; the CPU time is not."""
    samples, cpu = [], []
    for i in range(runs + 1):
        before()
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, env=env, cwd=cwd, check=True, capture_output=True)
        if i:
            samples.append((time.perf_counter() - start) * 1000)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            spent = after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime
            cpu.append(spent * 1000)
    return statistics.median(samples), statistics.median(cpu)


def peak_rss_mib(argv: Sequence[str], env: dict[str, str], cwd: str) -> float:
    """The peak RSS of one run of `argv` (the kernel's count for the child)."""
    child = subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _pid, _status, usage = os.wait4(child.pid, 0)
    child.returncode = 0
    return usage.ru_maxrss / 1024


def write_hermes_config(home: Path, base_url: str) -> None:
    """Hermes reads its provider from `~/.hermes/config.yaml`: the loopback server."""
    (home / ".hermes").mkdir(exist_ok=True)
    (home / ".hermes" / "config.yaml").write_text(
        f"model:\n  provider: custom\n  base_url: {base_url}\n  default: test-model\n"
        "  api_key: bench-key\n",
        encoding="utf-8",
    )


def hermes_path(given: str | None) -> str | None:
    """The `hermes` console script: given, or beside the peer python bench/all.py names."""
    if given:
        return given
    peer = os.environ.get("SEAM_BENCH_PEER_PYTHON")
    found = Path(peer).with_name("hermes") if peer else None
    return str(found) if found is not None and found.exists() else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--hermes", help="Hermes Agent's `hermes` script (own virtualenv)")
    args = parser.parse_args()
    runs = args.runs
    hermes = hermes_path(args.hermes)

    with tempfile.TemporaryDirectory() as tmp, OpenAIServer() as server:
        env = loopback_env(tmp, server.base_url)  # users run with bytecode caches

        def nothing() -> None:
            return None

        def answer() -> None:
            server.push(text_reply("Hello from the loopback server."))

        cases: list[tuple[str, list[str], Callable[[], None]]] = [
            ("python -c pass", [PYTHON, "-c", "pass"], nothing),
            ('python -c "import seam"', [PYTHON, "-c", "import seam"], nothing),
            ("seam --version", [SEAM, "--version"], nothing),
            ("seam --help", [SEAM, "--help"], nothing),
            ('seam run "hi" (loopback)', [SEAM, "run", "--session", "bench", "hi"], answer),
        ]
        if hermes:
            write_hermes_config(Path(tmp), server.base_url)
            cases.append(("hermes one-shot (loopback)", [hermes, "-z", "hi"], answer))
        # A project folder, as a user runs it (in the home itself `seam run` asks first).
        project = Path(tmp) / "project"
        project.mkdir()
        results = [
            (name, wall_ms(argv, env, str(project), runs, before)) for name, argv, before in cases
        ]
        answer()
        rss = peak_rss_mib([SEAM, "run", "--session", "rss", "hi"], env, str(project))
    used, start = probe_modules()

    base = results[0][1][0]
    width = max(len(name) for name, _ in results)
    print(f"median of {runs} runs (wall time and CPU time, ms)")
    print(f"{'command'.ljust(width)}  {'ms':>8}  {'x python':>8}  {'cpu ms':>8}")
    for name, (ms, cpu) in results:
        print(f"{name.ljust(width)}  {ms:8.1f}  {ms / base:8.1f}  {cpu:8.1f}")
    print(f"modules imported by seam run: {len(used)} ({len(start)} of them by bare Python)")
    print(f"peak RSS of seam run: {rss:.1f} MiB")
    if not hermes:
        print("hermes: not installed (python3 -m venv ~/.cache/seam-bench/hermes &&")
        print("  ~/.cache/seam-bench/hermes/bin/pip install hermes-agent; or --hermes PATH)")


if __name__ == "__main__":
    main()
