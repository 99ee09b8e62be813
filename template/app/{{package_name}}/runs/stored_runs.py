"""Runs waiting for an answer, kept so that an answer given hours later still resumes them.

A person may answer a Slack question after lunch. By then AgentCore has
stopped the session's microVM, or the local server has restarted, and
whatever was held in memory is gone. So a run that stops on questions is
stored with them (record.py), and restored with `Agent.load_snapshot`.

Answers claim the run with a write that only one request can make
(storage.py), so a double click or a retried request never runs a tool
twice, even across processes. Questions expire; the store keeps a bounded
number of waiting runs (waiting.py); damage is reported, never silently
replaced; what the person is told is in outcomes.py.

Why not SnapshotSessionManager, which keeps the same snapshot: its layout
nests each snapshot seven folders deep and writes the questions beside it
in a second file, and on a folder every new folder or file costs a disk
operation, more on AgentCore's session storage. One record per thread is
one write per stop, and one read per resume (the template repository's
bench/resume.py measures both).
"""

import logging
import re
import time
import uuid
from typing import Any

from strands import Agent

from . import record
from .outcomes import OUTCOMES, CannotContinue, SessionIdError, damaged_run, unreadable_history
from .seal import SealKey
from .storage import FolderStorage, RunStorage
from .waiting import WaitingIndex

logger = logging.getLogger(__name__)

_SAFE_SESSION_ID = re.compile(r"[A-Za-z0-9_.-]{1,200}")


class StoredRuns:
    """The waiting runs (and, with history, the conversations) of every thread."""

    def __init__(
        self,
        storage: RunStorage,
        seal: SealKey,
        keeps_history: bool,
        answer_within_days: float,
        max_waiting: int,
    ) -> None:
        self.storage = storage
        self.seal = seal
        self.keeps_history = keeps_history
        self.answer_within = answer_within_days * 24 * 3600
        self.max_waiting = max_waiting
        self._index = WaitingIndex(storage, seal, self.answer_within)

    async def begin_turn(self, session_id: str) -> record.StoredSnapshot | None:
        """A new message: close an open question; returns the conversation's snapshot (history).

        An old question's buttons stay on screen in Slack, and must not
        resume a run the thread has moved past. Without history nothing else
        of the thread is needed: Welt sends it whole.
        """
        try:
            thread = await self._read(session_id)
        except record.DamagedRecord as damage:
            logger.warning("the record of session %s is damaged: %s", session_id, damage)
            if self.keeps_history:
                raise unreadable_history(damage) from None
            return None  # Welt sends the whole thread; the next stop replaces the record
        if thread is None:
            return None
        if isinstance(thread, record.Waiting):
            await self._close(session_id, "replaced", thread.snapshot)
        return thread.snapshot if self.keeps_history else None

    async def save(self, session_id: str, agent: Agent) -> None:
        """Keep the thread's conversation after a turn (with history)."""
        self._check(session_id)
        settled = record.Settled("", time.time(), record.snapshot_of(agent))
        await self._write(session_id, settled)

    async def keep(self, session_id: str, agent: Agent, questions: dict[str, Any]) -> str:
        """Store a run that stopped on questions, in one write; returns the run's id."""
        self._check(session_id)
        self._index.scan_when_due(self._close)
        snapshot = record.snapshot_of(agent)
        waiting = record.Waiting(uuid.uuid4().hex, questions, time.time(), snapshot)
        await self._write(session_id, waiting)
        self._index.asked(session_id, waiting.asked_at)
        for oldest in self._index.beyond(self.max_waiting):
            logger.warning("dropped the waiting run of %s to make room", oldest)
            await self._close(oldest, "dropped")
        return waiting.run

    async def waiting(self, session_id: str) -> record.Waiting:
        """The run waiting for answers in this thread; CannotContinue says why there is none."""
        try:
            thread = await self._read(session_id)
        except record.DamagedRecord as damage:
            logger.warning("stored run of session %s is damaged: %s", session_id, damage)
            raise damaged_run(damage) from None
        if thread is None:
            earlier = self._asked_by_an_earlier_version(session_id)
            raise CannotContinue(OUTCOMES["earlier-version" if earlier else "nothing"])
        if isinstance(thread, record.Settled):
            outcome = OUTCOMES.get(thread.outcome, OUTCOMES["nothing"])
            raise CannotContinue(
                outcome.format(days=self._days(), max_waiting=self.max_waiting),
                replay=thread.outcome == "answered",
            )
        if time.time() - thread.asked_at > self.answer_within:
            await self._close(session_id, "expired", thread.snapshot)
            raise CannotContinue(OUTCOMES["expired"].format(days=self._days()))
        return thread

    async def claim(self, session_id: str, run: record.Waiting) -> None:
        """Take the waiting run for these answers; of all requests, only one can."""
        self._check(session_id)
        claim = record.claim_key(session_id, run.run)
        if not await self.storage.create(claim, record.claim_record(session_id, run.run)):
            raise CannotContinue(OUTCOMES["claimed"], replay=True)
        self._index.settled(session_id)

    async def done(self, session_id: str, agent: Agent) -> None:
        """A resumed run ended: tell a late answer so; with history, keep the conversation."""
        conversation = record.snapshot_of(agent) if self.keeps_history else None
        await self._close(session_id, "answered", conversation)

    async def failed(self, session_id: str, run: record.Waiting) -> None:
        """A resumed run failed: nothing is left to answer; the conversation stays as it was."""
        await self._close(session_id, "failed", run.snapshot)

    async def scanned(self) -> None:
        """Wait for the store's scan, if one runs (waiting.py)."""
        await self._index.scanned()

    async def _close(
        self, session_id: str, outcome: str, snapshot: record.StoredSnapshot | None = None
    ) -> None:
        """Record how the run ended; without history, nothing of the run is kept but that."""
        self._check(session_id)
        self._index.settled(session_id)
        kept = snapshot if self.keeps_history else None
        settled = record.Settled(outcome, time.time(), kept)
        await self._write(session_id, settled)

    async def _write(self, session_id: str, thread: record.Record) -> None:
        key = await self.seal.key()
        await self.storage.write(
            record.thread_key(session_id), record.dump(thread, session_id, key)
        )

    async def _read(self, session_id: str) -> record.Record | None:
        """The thread's record, or None; DamagedRecord when it is not one it could have written."""
        self._check(session_id)
        stored = await self.storage.read(record.thread_key(session_id))
        if stored is None:
            return None
        return record.parse(stored, session_id, await self.seal.key())

    def _asked_by_an_earlier_version(self, session_id: str) -> bool:
        """A question stored by release 0.3.0, in its own folder layout."""
        if not isinstance(self.storage, FolderStorage):
            return False
        return (self.storage.folder / f"session_{session_id}" / "questions.json").is_file()

    def _check(self, session_id: str) -> None:
        if not _SAFE_SESSION_ID.fullmatch(session_id):
            shown = session_id if len(session_id) <= 60 else session_id[:60] + "..."
            raise SessionIdError(
                f"session id {shown!r} cannot name stored state: use 1 to 200 letters, "
                "digits, '.', '_' and '-'"
            )

    def _days(self) -> str:
        return f"{self.answer_within / 86400:g}"
