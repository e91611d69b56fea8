"""Admission for the Coordinator: `submit` queues a submission, `ask` submits one and
drives it here.

A mixin of `Coordinator`, apart for size. `ask` is what a process that runs what it
submits uses (`Session.ask`): the store admits the submission already claimed for this
coordinator when nothing of its session is queued or running ahead of it
(`ExecutionStore.admit_and_claim`), one transaction where an admission and a claim made
two, and the turn starts at once. Anything else (work ahead of it, a resend of an id
already admitted) goes the usual way, through `run`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Unpack

from seam.contracts.execution import NewSubmission, Submission
from seam.contracts.tools import CancelToken
from seam.core.coordinator_leases import Leases, OnEvent
from seam.core.coordinator_session import ClaimSession, DriveOptions, Resolve, SubmitOptions
from seam.core.external_calls import ExtrasBook
from seam.core.loop_parts import check_keywords


class Admission(Leases):
    """`submit` and `ask` (see the module docstring)."""

    max_attempts: int
    extras: ExtrasBook
    _new_id: Callable[[], str]
    # The submissions this coordinator is driving now (`_drive` keeps it).
    _driving: set[str]

    if TYPE_CHECKING:

        async def run(
            self,
            submission_id: str,
            resolve: Resolve,
            on_event: OnEvent | None = None,
            **options: Unpack[DriveOptions],
        ) -> Submission: ...

        async def _drive(
            self,
            sub: Submission,
            session: ClaimSession,
            on_event: OnEvent | None,
            cancel: CancelToken | None = None,
        ) -> Submission: ...

    async def submit(
        self, session_key: str, text: str, **options: Unpack[SubmitOptions]
    ) -> Submission:
        check_keywords(options, SubmitOptions.__optional_keys__, "submit")
        return self._offered(options, await self.store.admit(self._new(session_key, text, options)))

    async def ask(
        self,
        session_key: str,
        text: str,
        resolve: Resolve,
        on_event: OnEvent | None = None,
        **options: Unpack[SubmitOptions],
    ) -> Submission:
        """Submit `text` and drive it to settlement here (see the module docstring);
        returns it settled."""
        check_keywords(options, SubmitOptions.__optional_keys__, "ask")
        new = self._new(session_key, text, options)
        sub = self._offered(
            options, await self.store.admit_and_claim(new, self.owner, lease=self.lease)
        )
        if sub.state == "running" and sub.lease_owner == self.owner and sub.id not in self._driving:
            try:
                session = await resolve(sub.session_key)
            except (Exception, asyncio.CancelledError):
                await self._let_go(sub, CancelToken())  # to the queue, not a lease to wait out
                raise
            sub = await self._drive(sub, session, on_event)
            if sub.state == "settled":
                return sub
        return await self.run(sub.id, resolve, on_event, admitted=sub)

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
