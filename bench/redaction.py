"""Redaction cost: what a tool result, a stored message or a log line pays.

The loop redacts every tool result (up to 80,000 characters) and every stored message and
event with the process's redactor: the exact configured secrets in their encodings (one
trie-shaped regex, plugins/safety/secrets.py) followed by the patterns (redact.py). This
times it on texts shaped like real tool output (Python source, `env`-style listings, a
base64 blob, prose, a short log line) for 1, 6 and 24 configured secrets, beside the
patterns alone, and the trie regex scanning on its own (what the substring pre-test in
front of it saves: CPython's regex engine tries every position, `in` runs at memchr speed).
Best of several runs (the machine may be shared), in milliseconds per call. Run:

    .venv/bin/python bench/redaction.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import base64
import random
import string
import time
from collections.abc import Callable
from pathlib import Path

from seam.plugins.safety.redact import redact
from seam.plugins.safety.secrets import Secret, SecretRedactor

ROOT = Path(__file__).resolve().parent.parent


def texts(rng: random.Random) -> dict[str, str]:
    source = "".join(p.read_text() for p in sorted((ROOT / "src" / "seam").rglob("*.py")))
    env = "\n".join(
        f"VAR_{i}={''.join(rng.choice(string.ascii_letters) for _ in range(30))}"
        for i in range(2500)
    )
    words = source.split()
    prose = " ".join(rng.choice(words) for _ in range(20_000))
    return {
        "python source, 80 kB": source[:80_000],
        "env listing, 80 kB": env[:80_000],
        "base64 blob, 80 kB": base64.b64encode(source.encode()[:60_000]).decode(),
        "prose, 80 kB": prose[:80_000],
        "log line, 80 B": "seam: WARNING seam.core.turn: tool terminal failed: exit 1 (3 ms)",
    }


def secrets(rng: random.Random, count: int) -> list[Secret]:
    alphabet = string.ascii_letters + string.digits + "-_"
    return [
        Secret(f"KEY_{i}", "".join(rng.choice(alphabet) for _ in range(rng.choice((40, 51, 164)))))
        for i in range(count)
    ]


def regex_only(redactor: SecretRedactor) -> Callable[[str], object]:
    """The one trie-shaped regex scanning the text, without the substring pre-test."""
    pattern = redactor._compiled()
    return pattern.search


def best_ms(fn: Callable[[str], str], text: str, repeat: int) -> float:
    fn(text)  # warm (and compile)
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn(text)
        times.append(time.perf_counter() - started)
    return min(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    samples = texts(random.Random(11))
    counts = (1, 6, 24)
    header = ["patterns"] + [f"+{n} secrets" for n in counts] + ["regex scan, 24"]
    print(f"{'ms per call':24}" + "".join(f"{h:>16}" for h in header))
    for name, text in samples.items():
        row = [best_ms(redact, text, args.repeat)]
        for count in counts:
            redactor = SecretRedactor(secrets(random.Random(count), count), then=redact)
            row.append(best_ms(redactor, text, args.repeat))
        scan = regex_only(SecretRedactor(secrets(random.Random(24), 24)))
        row.append(best_ms(scan, text, args.repeat))  # type: ignore[arg-type]
        print(f"{name:24}" + "".join(f"{v:>16.3f}" for v in row))
    started = time.perf_counter()
    SecretRedactor(secrets(random.Random(6), 6))("x")
    print(f"building and compiling for 6 secrets: {(time.perf_counter() - started) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
