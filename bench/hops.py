"""How long the path of `seam run "hi"` is, and what it does more than once.

Runs `seam run "hi"` in this process (`seam.apps.cli.entry.main`, as the console script
does) against a fresh SEAM_HOME in a temp dir, with no provider configured: the offline
(local) model is replaced by the scripted model (`seam.core.scripted_model`), so nothing
is downloaded or loaded and every other part is real (settings, the SQLite store, the
Coordinator, the loop). `sys.setprofile` (and `threading.setprofile`, for the store's
threads) sees every call from the CLI entry to the printed answer.

Definitions (a call is a function frame that starts, not one resumed after an `await`):

- **hops**: distinct Seam functions called on the way (by file and qualified name;
  module bodies excluded), and **files**: the distinct `src/seam` files they live in;
- **key derivations**: calls of `create_session_storage_key` (a public session name made
  into the durable key);
- **row fetches**: calls of a session store's `get` or `load`, per session key (the
  SQLite or in-memory store), counted apart when the store makes them of itself (its
  `create` looks for the row before it writes one);
- **settings reads**: calls of `read_config` (each one reads `config.toml`; `load_settings`
  calls it);
- **Runtime.open**: calls of `Runtime.open`;
- **the chain to the model**: the Seam frames on the stack when the model is first asked
  (`ScriptedModel.stream` is called), from the outermost down: what a reader follows from
  the entry to the model call, and the files it crosses. A task boundary ends a chain
  (the Coordinator runs a claimed turn in its own task), so the chain of the task that
  started it is added: the frames on the stack where that task was created.

Import cost is kept out: one unprofiled run comes first (in another fresh home), so the
measured run's modules are already imported. Run:

    .venv/bin/python bench/hops.py [--list]

`--list` prints every hop (file:qualified name, with its call count).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dis
import io
import os
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import seam
from seam.core.scripted_model import ScriptedModel, Step

SRC = str(Path(seam.__file__).resolve().parent)
RESUME = dis.opmap["RESUME"]
ROW_FETCHES = {"get", "load"}
STORES = ("SessionStore", "ExecutionStore")


def _scripted(self: Any, model: str) -> ScriptedModel:
    """The offline model's stand-in: answers every request with `hello`."""
    return ScriptedModel([Step(text="hello")] * 8)


class Recorder:
    """Counts the calls of Seam functions the profiler reports."""

    def __init__(self) -> None:
        self.calls: Counter[tuple[str, str]] = Counter()
        self.fetched: Counter[str] = Counter()
        # Fetches a store makes of itself (SQLite's `create` looks for the row first).
        self.inside = 0
        self.chain: list[tuple[str, str]] = []

    def _note_chain(self, frame: FrameType) -> None:
        """The Seam frames on the stack at the first model call, outermost first."""
        chain = []
        at: FrameType | None = frame
        while at is not None:
            if at.f_code.co_filename.startswith(SRC):
                chain.append(
                    (at.f_code.co_filename[len(SRC) - len("seam") :], at.f_code.co_qualname)
                )
            at = at.f_back
        task = asyncio.current_task()
        stack = task.get_stack() if task is not None else []
        outer = [
            (f.f_code.co_filename[len(SRC) - len("seam") :], f.f_code.co_qualname) for f in stack
        ]
        seen = set(chain)
        chain += [hop for hop in reversed(outer) if hop not in seen and hop[0].startswith("seam")]
        self.chain = list(reversed(chain))

    def __call__(self, frame: FrameType, event: str, arg: object) -> None:
        if event != "call":
            return
        code = frame.f_code
        path = code.co_filename
        if not path.startswith(SRC) or code.co_name == "<module>":
            return
        at = frame.f_lasti
        if at >= 0 and (code.co_code[at] != RESUME or code.co_code[at + 1] != 0):
            return  # a coroutine or generator resumed, not called
        qualname = code.co_qualname
        if not self.chain and qualname == "ScriptedModel.stream":
            self._note_chain(frame)
        self.calls[(path[len(SRC) - len("seam") :], qualname)] += 1
        owner = qualname.rpartition(".")[0]
        if code.co_name in ROW_FETCHES and owner.endswith(STORES):
            caller = frame.f_back
            if caller is not None and caller.f_locals.get("self") is frame.f_locals.get("self"):
                self.inside += 1
            else:
                self.fetched[str(frame.f_locals.get("key"))] += 1

    def count(self, name: str) -> int:
        return sum(n for (_, q), n in self.calls.items() if q == name or q.endswith("." + name))


def run_hi(root: Path) -> tuple[int, str]:
    """`seam run "hi"` with its own home, project and environment; exit code, stdout."""
    from seam.apps.cli.entry import main

    project = root / "project"
    project.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    env.update(HOME=str(root), SEAM_HOME=str(root / ".seam"))
    env.pop("SEAM_MODEL", None)
    env.pop("SEAM_STORE_URL", None)
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    out = io.StringIO()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(project)
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            try:
                main(["run", "hi"])
            except SystemExit as exc:
                code = int(exc.code or 0)
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return code, out.getvalue()


def measure() -> Recorder:
    from seam.wiring.models import ModelFactory

    ModelFactory._local = _scripted  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as warm, tempfile.TemporaryDirectory() as measured:
        code, _ = run_hi(Path(warm))
        if code:
            raise SystemExit(f"the warm-up run exited {code}")
        recorder = Recorder()
        threading.setprofile(recorder)
        sys.setprofile(recorder)
        try:
            code, answer = run_hi(Path(measured))
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
    if code or answer.strip() != "hello":
        raise SystemExit(f"the measured run exited {code} with {answer!r}")
    return recorder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print every hop")
    args = parser.parse_args()
    found = measure()
    if args.list:
        for (path, qualname), n in sorted(found.calls.items()):
            print(f"{n:5d}  {path}:{qualname}")
    files = {path for path, _ in found.calls}
    fetches = ", ".join(f"{n} x {key}" for key, n in found.fetched.items()) or "none"
    print(f"hops (distinct seam functions): {len(found.calls)}")
    print(f"files touched: {len(files)}")
    print(f"session key derivations: {found.count('create_session_storage_key')}")
    print(f"session row fetches: {sum(found.fetched.values())} ({fetches})")
    print(f"  and inside the store's own methods: {found.inside}")
    print(f"settings reads (read_config of config.toml): {found.count('read_config')}")
    print(f"Runtime.open calls: {found.count('Runtime.open')}")
    chain_files = {path for path, _ in found.chain}
    print(f"the chain to the model: {len(found.chain)} frames over {len(chain_files)} files")
    if args.list:
        for path, qualname in found.chain:
            print(f"       {path}:{qualname}")


if __name__ == "__main__":
    main()
