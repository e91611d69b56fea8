"""What every tracer gets from the runtime, whichever backs it (the SDK is never imported
here): provider retries noted on the model call's span, and a flush at exit."""

from __future__ import annotations

import logging

from seam.contracts.model import OnRetry, RetryNotice
from seam.contracts.tracing import NOOP_TRACER, Tracer

log = logging.getLogger("seam.telemetry")


def noting_retries(tracer: Tracer, on_retry: OnRetry | None) -> OnRetry | None:
    """`on_retry` that also notes each provider retry on the current span (the model
    call's): a `retry` event and the `seam.retries` count so far."""
    if tracer is NOOP_TRACER:
        return on_retry

    def note(notice: RetryNotice) -> None:
        span = tracer.current()
        span.set_attribute("seam.retries", max(notice.attempt - 1, 0))
        span.add_event(
            "retry", {"seam.retry.reason": notice.reason, "seam.retry.delay_s": notice.delay}
        )
        if on_retry is not None:
            on_retry(notice)

    return note


def shutdown_tracer(tracer: Tracer) -> None:
    """Flush and stop an exporting tracer (the no-op one has nothing to flush)."""
    shutdown = getattr(tracer, "shutdown", None)
    if shutdown is not None:
        try:
            shutdown()
        except Exception:  # a collector that went away must not fail the exit
            log.warning("could not flush the traces", exc_info=True)
