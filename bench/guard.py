"""The command guard over its corpora: what it decides and what one decision costs.

Classifies every command of `tests/plugins/guardrail/corpus_*.txt` (dangerous, everyday,
everyday changes) and prints, per corpus and per classifier: how many dangerous commands
were rated `safe`, how many everyday ones were held (needed approval), how many changes
ran unasked, and the time one classification takes (p50, p99 and max over the commands,
each command's time being the best of `--repeat` runs, in microseconds of the thread's CPU
time less the cost of reading that clock: on a shared machine, wall time mostly measures
the other processes).

"after" is this tree's classifier. "before" is the classifier of another checkout (by
default `/work/main`, when it exists), run in a subprocess with that checkout's `src` first
on the path, over the same corpus files. Run:

    .venv/bin/python bench/guard.py [--repeat 5] [--before /work/main | --before '']
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT / "tests" / "plugins" / "guardrail"
HOME = "/home/me"
CWD = "/home/me/project"


def corpus(name: str) -> list[str]:
    """The commands of one corpus file (same format as tests/plugins/guardrail/corpus.py)."""
    import codecs

    out = []
    for line in (CORPORA / name).read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        escaped = line.startswith("esc:")
        out.append(codecs.decode(line[4:], "unicode_escape") if escaped else line)
    return out


def measure(repeat: int) -> dict[str, dict[str, float]]:
    """Classify each corpus with whichever `seam` is importable; figures by corpus."""
    from seam.plugins.guardrail.classifier import CommandClassifier

    guard = CommandClassifier(home=HOME, protected=[f"{HOME}/.seam"])
    figures: dict[str, dict[str, float]] = {}
    for name in ("dangerous", "everyday", "changes"):
        path = CORPORA / f"corpus_{name}.txt"
        if not path.exists():
            continue
        commands = corpus(path.name)
        times: list[float] = []
        verdicts: list[str] = []
        clock = time.thread_time_ns
        overhead = min(-clock() + clock() for _ in range(200))
        for command in commands:
            best = 10**12
            for _ in range(repeat):
                start = clock()
                found = guard.classify(command, cwd=CWD)
                best = min(best, clock() - start - overhead)
            times.append(best / 1000)
            verdicts.append(found.verdict)
        times.sort()
        figures[name] = {
            "commands": len(commands),
            "safe": verdicts.count("safe"),
            "held": len(verdicts) - verdicts.count("safe"),
            "forbidden": verdicts.count("forbidden"),
            "p50_us": times[len(times) // 2],
            "p99_us": times[min(len(times) - 1, int(len(times) * 0.99))],
            "max_us": times[-1],
        }
    return figures


def before(checkout: str, repeat: int) -> dict[str, dict[str, float]] | None:
    """The same measurement with another checkout's classifier, in a subprocess."""
    src = Path(checkout) / "src"
    if not (src / "seam" / "plugins" / "guardrail" / "classifier.py").exists():
        return None
    env = {**os.environ, "PYTHONPATH": str(src)}
    script = [sys.executable, __file__, "--worker", "--repeat", str(repeat)]
    done = subprocess.run(script, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        print(f"before: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def show(label: str, figures: dict[str, dict[str, float]]) -> None:
    for name, f in figures.items():
        n = int(f["commands"])
        if name == "dangerous":
            verdict = f"rated safe {int(f['safe'])}"
        elif name == "everyday":
            verdict = f"held {int(f['held'])} ({100 * f['held'] / n:.1f}%)"
        else:
            verdict = f"ran unasked {int(f['safe'])}"
        print(
            f"{label:6} {name:9} {n:4} commands  {verdict:22}  forbidden {int(f['forbidden']):3}"
            f"  p50 {f['p50_us']:7.0f} us  p99 {f['p99_us']:7.0f} us  max {f['max_us']:7.0f} us"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", default="/work/main")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(measure(args.repeat)))
        return
    old = before(args.before, args.repeat) if args.before else None
    if old is not None:
        show("before", old)
    show("after", measure(args.repeat))


if __name__ == "__main__":
    main()
