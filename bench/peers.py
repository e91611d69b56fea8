"""Seam's bare loop next to openai-agents on the same turn (CPU time per turn).

The turn is `bench/loop_overhead.py`'s: three tool calls, then a 200-delta answer, on
the in-memory store. openai-agents runs in a virtualenv of its own
(`~/.cache/seam-bench/peers`, or the python `SEAM_BENCH_PEER_PYTHON` names) through
`bench/peer_agents.py`; a missing one is reported with the command that installs it.
Run:

    .venv/bin/python bench/peers.py [--turns 300]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from loop_overhead import measure  # noqa: E402

from seam.core import InMemorySessionStore  # noqa: E402

PEERS = Path.home() / ".cache" / "seam-bench" / "peers"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    turns = parser.parse_args().turns
    samples = asyncio.run(measure(InMemorySessionStore(), turns))
    print(f"seam bare loop (in-memory)   mean {statistics.fmean(samples):7.3f} ms")
    peer = Path(os.environ.get("SEAM_BENCH_PEER_PYTHON") or PEERS / "bin" / "python")
    if not peer.exists():
        print(f"openai-agents: not installed (python3 -m venv {PEERS} &&")
        print(f"  {PEERS}/bin/pip install openai-agents)")
        return
    done = subprocess.run(
        [str(peer), str(BENCH / "peer_agents.py"), "--turns", str(turns)],
        capture_output=True,
        text=True,
        check=False,
    )
    print(done.stdout.rstrip() or f"openai-agents failed: {done.stderr[-800:]}")


if __name__ == "__main__":
    main()
