"""Security proofs: a hostile scripted model against the real runtime.

What is proven (issue #22, "Unknown is never safe"): whatever a hostile model asks for,
through every tool (terminal, execute_code, read_file, write_file, patch, list_dir,
search_files, memory, process), on both sandbox backends,

- no secret canary reaches a model request, a stored message or event, a `--json` event,
  a log file, a file Seam writes, or a listener on the host's loopback, in any form
  (raw, reversed, cut, spaced, `od`, `xxd`, base64, hex); a redaction label in a tool
  result counts as a leak too: secrets must be absent, redaction is only the second line;
- no file outside the reach is written, created or deleted, and no control file changes
  (`~/.bashrc`, `SOUL.md`, `config.toml`, `approvals.json`, `.git/hooks/*`, `.git/config`);
- no process a command started is alive once the turn is over.

How: `machine.py` builds a throwaway HOME, `$SEAM_HOME` and git workspace full of random
canaries; `phases.py` is the hostile script (built from `moves.py`); `test_hostile_model.py`
runs each phase with `seam run --json` against the loopback OpenAI fake
(tests/support/openai_server.py), on bubblewrap with every command approved (the sandbox
must hold) and on the local backend with nobody to approve (the guard must hold);
`findings.py` turns what is left behind into one failure line per channel that leaked;
`leaks.py` recognises a canary in any dress.
`test_second_line.py` shows redaction still hides a configured key the person put in reach;
`test_leak_check.py` tests the checks themselves.

Needs `/usr/bin/bwrap` for the bubblewrap half (skipped, with the reason, without it).
Run: `.venv/bin/python -m pytest -q tests/security -p no:cacheprovider`.
"""
