"""The counters `/metrics` prints (Prometheus text), fed by every event of a turn run here."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from seam.contracts.events import AgentEvent, Done, RunStart, TextDelta, UsageEvent


@dataclass
class Metrics:
    """Counters `/metrics` prints (Prometheus text)."""

    turns: dict[str, int] = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    turn_seconds_sum: float = 0.0
    turn_seconds_count: int = 0
    first_delta_seconds_sum: float = 0.0
    first_delta_seconds_count: int = 0
    open_streams: int = 0
    requests: int = 0
    # When a session's message was admitted, and its turn started (perf_counter), until
    # its first text and its `done`.
    admitted: dict[str, float] = field(default_factory=dict, repr=False)
    started: dict[str, float] = field(default_factory=dict, repr=False)

    def admit(self, key: str) -> None:
        """A message was admitted to `key`: time it to the turn's first text."""
        self.admitted.setdefault(key, time.perf_counter())

    def settled(self, outcome: str | None) -> None:
        if outcome is not None:
            self.turns[outcome] = self.turns.get(outcome, 0) + 1

    def observe(self, event: AgentEvent) -> None:
        """Count an event of a turn driven here (called on the hot path: cheap checks)."""
        kind = type(event)
        if kind is RunStart:
            self.started[event.session_key] = time.perf_counter()
        elif kind is TextDelta and self.admitted:
            admitted = self.admitted.pop(event.session_key, None)
            if admitted is not None:
                self.first_delta_seconds_sum += time.perf_counter() - admitted
                self.first_delta_seconds_count += 1
        elif kind is UsageEvent:
            assert isinstance(event, UsageEvent)
            self.input_tokens += event.usage.input_tokens
            self.output_tokens += event.usage.output_tokens
        elif kind is Done:
            self.admitted.pop(event.session_key, None)
            started = self.started.pop(event.session_key, None)
            if started is not None:
                self.turn_seconds_sum += time.perf_counter() - started
                self.turn_seconds_count += 1

    def render(self) -> str:
        lines = [
            "# HELP seam_turns_total Turns settled by this process, by outcome.",
            "# TYPE seam_turns_total counter",
        ]
        for outcome in ("completed", "failed", "aborted"):
            value = self.turns.get(outcome, 0)
            lines.append(f'seam_turns_total{{outcome="{outcome}"}} {value}')
        lines += [
            "# HELP seam_tokens_total Model tokens used by turns run here.",
            "# TYPE seam_tokens_total counter",
            f'seam_tokens_total{{kind="input"}} {self.input_tokens}',
            f'seam_tokens_total{{kind="output"}} {self.output_tokens}',
            "# HELP seam_turn_seconds Wall time of a turn from its first event to done.",
            "# TYPE seam_turn_seconds summary",
            f"seam_turn_seconds_sum {self.turn_seconds_sum:.6f}",
            f"seam_turn_seconds_count {self.turn_seconds_count}",
            "# HELP seam_first_delta_seconds From a message's admission to its first text.",
            "# TYPE seam_first_delta_seconds summary",
            f"seam_first_delta_seconds_sum {self.first_delta_seconds_sum:.6f}",
            f"seam_first_delta_seconds_count {self.first_delta_seconds_count}",
            "# HELP seam_open_streams Event streams open now.",
            "# TYPE seam_open_streams gauge",
            f"seam_open_streams {self.open_streams}",
            "# HELP seam_http_requests_total HTTP requests served.",
            "# TYPE seam_http_requests_total counter",
            f"seam_http_requests_total {self.requests}",
        ]
        return "\n".join(lines) + "\n"


__all__ = ["Metrics"]
