"""Every benchmark in one command, and a table of ratios against floors and peers.

Runs each script of `bench/` (short settings by default, `--full` for their own
defaults) as a process of its own, prints what each prints, then one table: each figure
next to its floor (what the same work costs done minimally: bare Python, a minimal
asyncio client, the bare loop) or its peer (openai-agents, Hermes Agent), and the
ratio. Peers live outside the repository, each in a virtualenv of its own under
`~/.cache/seam-bench/` (`--peers DIR`); a missing one is listed with the command that
installs it (`--install` runs those commands: pip from PyPI). Run:

    .venv/bin/python bench/all.py [--full] [--only provider,startup] [--install]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
PYTHON = sys.executable
PEERS = Path.home() / ".cache" / "seam-bench"
# The peers: a virtualenv each, and the package pip installs into it.
PEER_PACKAGES = {"peers": "openai-agents", "hermes": "hermes-agent"}


@dataclass(frozen=True)
class Row:
    """One line of the table: a figure, what it is compared with, and the ratio."""

    name: str
    figure: str
    against: str
    ratio: float | None
    goal: str = ""


Parse = Callable[[str], list[Row]]


def _number(pattern: str, text: str) -> float | None:
    found = re.search(pattern, text)
    return float(found.group(1)) if found else None


def _rows_provider(out: str) -> list[Row]:
    seam = _number(r"seam provider\s+([\d.]+) ms", out)
    floor = _number(r"asyncio floor\s+([\d.]+) ms", out)
    conns = _number(r"seam provider.*connections (\d+)", out)
    if seam is None or floor is None:
        return []
    return [
        Row("OpenAI turn CPU (3 calls)", f"{seam:.2f} ms", f"asyncio floor {floor:.2f} ms",
            seam / floor, "<= 3x"),
        Row("TCP connections, all calls", f"{conns:.0f}", "one", conns, "1"),
    ]  # fmt: skip


def _rows_startup(out: str) -> list[Row]:
    rows = []
    python = _number(r"python -c pass\s+([\d.]+)", out)
    run = _number(r'seam run "hi" \(loopback\)\s+([\d.]+)', out)
    hermes = _number(r"hermes one-shot \(loopback\)\s+([\d.]+)", out)
    modules = _number(r"modules imported by seam run:\s+(\d+)", out)
    rss = _number(r"peak RSS of seam run:\s+([\d.]+) MiB", out)
    if run is not None and python is not None:
        rows.append(Row("seam run wall", f"{run:.0f} ms", f"python -c pass {python:.0f} ms",
                        run / python))  # fmt: skip
    if run is not None and hermes is not None:
        rows.append(Row("Hermes one-shot / seam run", f"{hermes:.0f} ms", f"seam run {run:.0f} ms",
                        hermes / run, ">= 8x"))  # fmt: skip
    run_cpu = _number(r'seam run "hi" \(loopback\)\s+[\d.]+\s+[\d.]+\s+([\d.]+)', out)
    hermes_cpu = _number(r"hermes one-shot \(loopback\)\s+[\d.]+\s+[\d.]+\s+([\d.]+)", out)
    if run_cpu and hermes_cpu is not None:
        rows.append(Row("Hermes / seam run, CPU", f"{hermes_cpu:.0f} ms",
                        f"seam run {run_cpu:.0f} ms", hermes_cpu / run_cpu, ">= 8x"))  # fmt: skip
    if modules is not None:
        rows.append(
            Row("modules, seam run", f"{modules:.0f}", "budget 550", modules / 550, "<= 550")
        )
    if rss is not None:
        rows.append(Row("peak RSS, seam run", f"{rss:.1f} MiB", "goal 45 MiB", rss / 45, "< 45"))
    return rows


def _pair(out: str, name: str, ours: str, theirs: str, label: str, goal: str) -> list[Row]:
    """A row comparing two `mean X ms` figures of one script's output."""
    seam = _number(ours + r"\s+mean\s+([\d.]+) ms", out)
    other = _number(theirs + r"\s+mean\s+([\d.]+) ms", out)
    if seam is None or other is None:
        return []
    return [Row(name, f"{seam:.3f} ms", f"{label} {other:.3f} ms", seam / other, goal)]


def _rows_loop(out: str) -> list[Row]:
    """A plain `AgentLoop` on the SQLite session store (no submission, an append per
    step). Seam's surfaces and subagents run durable turns (`Runtime`, `Session.ask`), so
    it has no goal of its own: the goal's "real turn through Runtime" is
    `_rows_durable`'s."""
    return _pair(out, "plain loop turn CPU, SQLite", r"sqlite store[^\n]*?", "in-memory store",
                 "bare loop", "")  # fmt: skip


def _rows_peers(out: str) -> list[Row]:
    return _pair(out, "bare loop turn CPU", r"seam bare loop \(in-memory\)",
                 "openai-agents turn", "openai-agents", "< 1")  # fmt: skip


def _rows_search(out: str) -> list[Row]:
    p50 = _number(r"all queries\s+p50\s+([\d.]+) ms", out)
    if p50 is None:
        return []
    return [Row("session search p50", f"{p50:.2f} ms", "goal 1 ms", p50 / 1.0, "< 1 ms")]


def _rows_recall(out: str) -> list[Row]:
    hybrid = _number(r"hybrid \(words \+ meaning\)\s+p50\s+([\d.]+) ms", out)
    words = _number(r"full text alone\s+p50\s+([\d.]+) ms", out)
    if hybrid is None or not words:
        return []
    return [Row("hybrid session search p50", f"{hybrid:.2f} ms", f"full text {words:.2f} ms",
                hybrid / words)]  # fmt: skip


def _rows_durable(out: str) -> list[Row]:
    """The durable SQLite turn against the bare loop, and PostgreSQL's throughput against
    SQLite's (one worker) and against itself (four workers on two cores)."""
    rows = _pair(out, "durable turn CPU, SQLite", r"durable, SQLite \(WAL, file\)",
                 "bare loop, in-memory session store", "bare loop", "<= 3x")  # fmt: skip
    sqlite1 = _number(r"SQLite\s+1 worker\(s\):\s+([\d.]+)", out)
    pg1 = _number(r"PostgreSQL\s+1 worker\(s\):\s+([\d.]+)", out)
    pg4 = _number(r"PostgreSQL\s+4 worker\(s\):\s+([\d.]+)", out)
    if pg1 is not None and sqlite1:
        rows.append(Row("PG 1 worker settled/s", f"{pg1:.0f}/s", f"SQLite 1 worker {sqlite1:.0f}/s",
                        pg1 / sqlite1, ""))  # fmt: skip
    if pg1 and pg4 is not None:
        rows.append(Row("PG 4 workers settled/s", f"{pg4:.0f}/s", f"PG 1 worker {pg1:.0f}/s",
                        pg4 / pg1, ">= 1.8x"))  # fmt: skip
    # The floor (`pg_floor.py`): a minimal worker by hand, what this machine allows.
    floor1 = _number(r"PostgreSQL floor 1 client\(s\):\s+([\d.]+)", out)
    floor4 = _number(r"PostgreSQL floor 4 client\(s\):\s+([\d.]+)", out)
    if floor1 is not None and sqlite1:
        rows.append(Row("PG floor 1 client settled/s", f"{floor1:.0f}/s",
                        f"SQLite 1 worker {sqlite1:.0f}/s", floor1 / sqlite1, ""))  # fmt: skip
    if floor1 and floor4 is not None:
        rows.append(Row("PG floor 4 clients settled/s", f"{floor4:.0f}/s",
                        f"PG floor 1 client {floor1:.0f}/s", floor4 / floor1, ""))  # fmt: skip
    # One worker running four submissions at a time (`seam worker --concurrency 4`), against
    # SQLite's one worker in its faster shape: each store as one worker runs it best. One
    # at a time, a PostgreSQL worker waits on the server for each of its round trips.
    sqlite_x4 = _number(r"SQLite\s+1 worker\(s\), 4 at a time:\s+([\d.]+)", out)
    pg_x4 = _number(r"PostgreSQL\s+1 worker\(s\), 4 at a time:\s+([\d.]+)", out)
    if pg_x4 is not None and sqlite1 and sqlite_x4:
        best, shape = max((sqlite1, "SQLite 1 worker"), (sqlite_x4, "SQLite x4"))
        rows.append(Row("PG 1 worker x4 settled/s", f"{pg_x4:.0f}/s", f"{shape} {best:.0f}/s",
                        pg_x4 / best, ">= 0.6x"))  # fmt: skip
    return rows


def _rows_concurrency(out: str) -> list[Row]:
    """The burst's wall time and the steady load's p99 added latency, on SQLite."""
    rows = []
    burst = _number(r"sqlite burst\s+\d+ turns\s+wall\s+([\d.]+) s", out)
    turns = _number(r"sqlite burst\s+(\d+) turns", out)
    steady = _number(r"sqlite steady[^\n]*?p99\s+([\d.]+) ms", out)
    if burst is not None:
        rows.append(Row(f"burst {turns:.0f} durable turns", f"{burst:.2f} s", "goal 1.5 s",
                        burst / 1.5, "< 1.5 s"))  # fmt: skip
    if steady is not None:
        rows.append(Row("steady 100/s p99 added", f"{steady:.1f} ms", "goal 20 ms", steady / 20,
                        "< 20 ms"))  # fmt: skip
    return rows


def _rows_web(out: str) -> list[Row]:
    """All at once: the streams' first event (the issue's figure, p99) and the messages'
    first delta when all 1,000 turns are sent at the same instant (p99, against the same
    250 ms for scale: the issue sets no goal for a thousand turns started at once on two
    cores, only for streams opened and for messages spread over 10 s)."""
    rows = []
    opened = _number(r"stream opened -> first event: p50 [\d.]+ ms, p99 ([\d.]+) ms", out)
    first = _number(r"first text_delta, added: p50 [\d.]+ ms, p99 ([\d.]+) ms", out)
    clients = _number(r"(\d+) clients", out) or 0
    if opened is not None:
        rows.append(Row(f"SSE {clients:.0f} opened, p99 1st event", f"{opened:.0f} ms",
                        "goal 250 ms", opened / 250, "< 250 ms"))  # fmt: skip
    if first is not None:
        rows.append(Row(f"SSE {clients:.0f} at once, p99 1st delta", f"{first:.0f} ms",
                        "250 ms", first / 250, ""))  # fmt: skip
    return rows


def _rows_web_spread(out: str) -> list[Row]:
    first = _number(r"first text_delta, added: p50 [\d.]+ ms, p99 ([\d.]+) ms", out)
    if first is None:
        return []
    return [Row("SSE spread over 10 s, p99 added", f"{first:.0f} ms", "goal 50 ms", first / 50,
                "< 50 ms")]  # fmt: skip


@dataclass(frozen=True)
class Bench:
    script: str
    quick: tuple[str, ...]
    rows: Parse | None = None
    peer: str | None = None  # the peer venv whose python the script is given
    always: tuple[str, ...] = ()  # arguments given with --full too


BENCHES = (
    Bench("provider.py", ("--turns", "100", "--rounds", "3"), _rows_provider),
    Bench("startup.py", ("--runs", "5"), _rows_startup, peer="hermes"),
    Bench("peers.py", ("--turns", "300"), _rows_peers, peer="peers"),
    Bench("loop_overhead.py", ("--turns", "300"), _rows_loop),
    Bench("session_search.py", ("--messages", "20000", "--sessions", "500"), _rows_search),
    Bench("recall.py", ("--queries", "120"), _rows_recall),
    Bench("prompt_overhead.py", ()),
    Bench("redaction.py", ()),
    Bench("guard.py", ()),
    Bench("hops.py", ()),
    Bench("checkpoint.py", ("--files", "2000")),
    Bench("sandbox.py", ()),
    Bench("durable.py", ("--turns", "400"), _rows_durable),
    Bench("concurrency.py", ("--store", "sqlite", "--duration", "10"), _rows_concurrency),
    Bench("web.py", ("--clients", "1000"), _rows_web),
    Bench("web.py", ("--clients", "1000"), _rows_web_spread, always=("--spread", "10")),
)


def peer_python(name: str, root: Path) -> Path | None:
    python = root / name / "bin" / "python"
    return python if python.exists() else None


def install_hint(name: str, root: Path) -> str:
    venv = root / name
    return f"python3 -m venv {venv} && {venv}/bin/pip install {PEER_PACKAGES[name]}"


def run_bench(bench: Bench, full: bool, root: Path) -> tuple[str, float]:
    argv = [PYTHON, str(BENCH / bench.script), *(() if full else bench.quick), *bench.always]
    env = dict(os.environ)
    if bench.peer and (python := peer_python(bench.peer, root)):
        env["SEAM_BENCH_PEER_PYTHON"] = str(python)
    started = time.monotonic()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    took = time.monotonic() - started
    failed = f"\n(exit {done.returncode}) {done.stderr[-600:]}" if done.returncode else ""
    return done.stdout + failed, took


def table(rows: list[Row]) -> str:
    lines = [f"{'figure':<34} {'seam':>12}  {'against':<30} {'ratio':>7}  goal"]
    for row in rows:
        ratio = f"{row.ratio:6.2f}x" if row.ratio is not None else "      -"
        lines.append(f"{row.name:<34} {row.figure:>12}  {row.against:<30} {ratio}  {row.goal}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--full", action="store_true", help="each script's own defaults")
    parser.add_argument("--only", default="", help="comma-separated script names")
    parser.add_argument("--peers", type=Path, default=PEERS, help="where the peer venvs are")
    parser.add_argument("--install", action="store_true", help="install missing peers")
    args = parser.parse_args()
    wanted = {name.removesuffix(".py") for name in args.only.split(",") if name}
    for name in PEER_PACKAGES:
        if peer_python(name, args.peers) is None:
            hint = install_hint(name, args.peers)
            if args.install:
                subprocess.run(hint, shell=True, check=False)
            else:
                print(f"peer {PEER_PACKAGES[name]} missing: {hint}")
    rows: list[Row] = []
    for bench in BENCHES:
        if wanted and bench.script.removesuffix(".py") not in wanted:
            continue
        out, took = run_bench(bench, args.full, args.peers)
        print(f"== {bench.script} ({took:.0f} s)\n{out.rstrip()}\n", flush=True)
        if bench.rows is not None:
            rows += bench.rows(out)
    print(table(rows))


if __name__ == "__main__":
    main()
