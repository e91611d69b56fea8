"""Admission for the Coordinator: `submit` queues a submission, `abort` asks to stop
one, and what callers add to their submissions' turns is kept (`extras`).

A mixin of `Coordinator`, apart for size. `Coordinator.ask` admits through `_new` and
`_offered` too (`ExecutionStore.admit_and_claim`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Unpack

from seam.contracts.execution import NewSubmission, Submission
from seam.contracts.turn_extras import TurnExtras
from seam.core.coordinator_leases import Leases
from seam.core.coordinator_session import SubmitOptions
from seam.core.external_calls import ExtrasBook
from seam.core.loop_parts import check_keywords


class Admission(Leases):
    """`submit`, `abort` and the turn's extras (see the module docstring)."""

    max_attempts: int
    extras: ExtrasBook
    _new_id: Callable[[], str]

    async def submit(
        self, session_key: str, text: str, **options: Unpack[SubmitOptions]
    ) -> Submission:
        check_keywords(options, SubmitOptions.__optional_keys__, "submit")
        return self._offered(options, await self.store.admit(self._new(session_key, text, options)))

    async def abort(self, submission_id: str) -> Submission:
        return await self.store.request_abort(submission_id)

    def _new(self, session_key: str, text: str, options: SubmitOptions) -> NewSubmission:
        extras = options.get("extras")
        return NewSubmission(
            options.get("submission_id") or self._new_id(),
            session_key,
            text,
            personality=options.get("personality"),
            max_attempts=self.max_attempts,
            # Stored with it: whichever worker claims it shows them to the model.
            images=extras.images if extras is not None else (),
        )

    def _offered(self, options: SubmitOptions, sub: Submission) -> Submission:
        extras = options.get("extras")
        if extras is not None:
            self.extras.offer(sub.id, extras)
        return sub

    async def _extras_of(self, sub: Submission) -> TurnExtras:
        """What the caller added to the turn; its images from the store when the caller
        handed none to this process (another process admitted it, or crashed)."""
        extras = self.extras.get(sub.id)
        if sub.images and not extras.images:
            shown = await self.store.load_images(sub.images)
            extras = replace(extras, images=tuple(shown))
        return extras

    async def _submission(self, submission_id: str, admitted: Submission | None) -> Submission:
        if admitted is not None and admitted.id == submission_id:
            sub: Submission | None = admitted
        else:
            sub = await self.store.submission(submission_id)
        if sub is None:
            raise KeyError(f"no submission {submission_id!r}")
        return sub
