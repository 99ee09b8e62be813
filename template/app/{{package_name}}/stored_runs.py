"""Runs waiting for an answer, kept so that an answer given hours later still resumes them.

A person may answer a Slack question after lunch. By then AgentCore has
stopped the session's microVM, or the local server has restarted, and
whatever was held in memory is gone. So a run that stops on questions is
stored with them, as Strands' own snapshot of the agent (`Agent.take_snapshot`:
messages, agent.state with a tool's memo and the gate's fingerprints, and
the interrupt state), and restored with `Agent.load_snapshot`.

Answers claim the run with a write that only one request can make
(run_storage.py), so a double click or a retried request never runs a tool
twice, even across processes. Questions expire; the store keeps a bounded
number of waiting runs; damage is reported, never silently replaced.

Keys, under the store's root, flat, one record per thread:
    threads/<session>.json        the run's snapshot and questions while it waits;
                                  how it ended afterwards (for a late answer); with
                                  history, the conversation's snapshot
    claims/<session>.<run>.json   one per resume, made by one request only

Why not SnapshotSessionManager, which keeps the same snapshot: its layout
nests each snapshot seven folders deep and writes the questions beside it
in a second file, and on a folder every new folder or file costs a disk
operation (about 0.4 ms here, more on AgentCore's session storage). One
record per thread is one write per stop, and one read per resume
(the template repository's bench/resume.py measures both).
"""

import json
import logging
import re
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from strands import Agent
from strands.types import Snapshot
from strands.types.session import decode_bytes_values, encode_bytes_values

from .run_storage import FolderStorage, RunStorage, run_storage
from .settings import AGENT_MANAGES_HISTORY, ANSWER_WITHIN_DAYS, MAX_PENDING_RUNS

logger = logging.getLogger(__name__)

# The layout of a thread's record. A record of another format is refused,
# not guessed at: a release that changes it says so in its changelog.
FORMAT = 2

_SAFE_SESSION_ID = re.compile(r"[A-Za-z0-9_.-]{1,200}")


class SessionIdError(ValueError):
    """A session id that cannot name stored state."""


class CannotContinue(Exception):
    """A request that stored state cannot serve; the message is for the human."""


@dataclass(frozen=True)
class WaitingRun:
    run: str  # one id per stop on questions, claimed once
    questions: dict[str, Any]  # interrupt id -> the reason the human saw
    asked_at: float
    snapshot: Any  # the agent as it stopped, as stored


class StoredRuns:
    """The waiting runs (and, with history, the conversations) of every thread."""

    # How often a folder store looks for expired questions and old outcomes.
    SWEEP_EVERY_SECONDS = 3600

    def __init__(
        self,
        keeps_history: bool = AGENT_MANAGES_HISTORY,
        answer_within_days: float = ANSWER_WITHIN_DAYS,
        max_waiting: int = MAX_PENDING_RUNS,
        store: Callable[[], RunStorage] = run_storage,
    ) -> None:
        self.keeps_history = keeps_history
        self.answer_within = answer_within_days * 24 * 3600
        self.max_waiting = max_waiting
        self._store = store
        # Sessions with a waiting run, oldest question first: read from a
        # folder once, then kept current by this process.
        self._waiting: OrderedDict[str, float] = OrderedDict()
        self._indexed: RunStorage | None = None
        self._swept_at = 0.0

    async def begin_turn(self, session_id: str) -> dict | None:
        """A new message: close an open question; returns the conversation's snapshot (history).

        An old question's buttons stay on screen in Slack, and must not
        resume a run the thread has moved past. Without history nothing else
        of the thread is needed: Welt sends it whole.
        """
        store = self._checked(session_id)
        try:
            record = await self._read(store, session_id)
        except ValueError as damage:
            logger.warning("the record of session %s is damaged: %s", session_id, damage)
            if self.keeps_history:
                raise unreadable_history(damage) from None
            return None  # Welt sends the whole thread; the next stop replaces the record
        if record is None:
            return None
        if "questions" in record:
            await self._close(store, session_id, "replaced", record.get("snapshot"))
        return record.get("snapshot") if self.keeps_history else None

    async def save(self, session_id: str, agent: Agent) -> None:
        """Keep the thread's conversation after a turn (with history)."""
        store = self._checked(session_id)
        await self._write(store, session_id, {"format": FORMAT, "snapshot": _snapshot(agent)})

    async def keep(self, session_id: str, agent: Agent, questions: dict[str, Any]) -> str:
        """Store a run that stopped on questions, in one write; returns the run's id."""
        store = self._checked(session_id)
        if time.time() - self._swept_at > self.SWEEP_EVERY_SECONDS:
            await self.sweep()
        waiting = await self._index(store)
        run, asked_at = uuid.uuid4().hex, time.time()
        record = {
            "format": FORMAT,
            "run": run,
            "asked_at": asked_at,
            "questions": questions,
            "snapshot": _snapshot(agent),
        }
        await self._write(store, session_id, record)
        waiting.pop(session_id, None)
        waiting[session_id] = asked_at
        while len(waiting) > self.max_waiting:
            oldest, _ = waiting.popitem(last=False)
            logger.warning("dropped the waiting run of %s to make room", oldest)
            await self._close(store, oldest, "dropped")
        return run

    async def waiting(self, session_id: str) -> WaitingRun:
        """The run waiting for answers in this thread; CannotContinue says why there is none."""
        store = self._checked(session_id)
        try:
            record = await self._read(store, session_id)
        except ValueError as damage:
            logger.warning("stored run of session %s is damaged: %s", session_id, damage)
            raise CannotContinue(
                f"Cannot resume: the stored run of this thread is damaged ({damage}), so it "
                "was not resumed. Send a new message to start again."
            ) from None
        if record is None:
            earlier = _asked_by_an_earlier_version(store, session_id)
            raise CannotContinue(_OUTCOMES["earlier-version" if earlier else "nothing"])
        if "questions" not in record:
            outcome = _OUTCOMES.get(record.get("outcome", ""), _OUTCOMES["nothing"])
            raise CannotContinue(outcome.format(days=self._days(), max_waiting=self.max_waiting))
        try:
            run = WaitingRun(
                str(record["run"]),
                dict(record["questions"]),
                float(record["asked_at"]),
                record.get("snapshot"),
            )
        except (ValueError, KeyError, TypeError) as damage:
            logger.warning("stored run of session %s is damaged: %s", session_id, damage)
            raise CannotContinue(
                f"Cannot resume: the stored run of this thread is damaged ({damage!r} is "
                "missing or wrong), so it was not resumed. Send a new message to start again."
            ) from None
        if time.time() - run.asked_at > self.answer_within:
            await self._close(store, session_id, "expired", record.get("snapshot"))
            raise CannotContinue(_OUTCOMES["expired"].format(days=self._days()))
        return run

    async def claim(self, session_id: str, run: WaitingRun) -> None:
        """Take the waiting run for these answers; of all requests, only one can."""
        store = self._checked(session_id)
        with store.reachable():
            taken = await store.create(f"claims/{session_id}.{run.run}.json", _json(_now()))
        if not taken:
            raise CannotContinue(_OUTCOMES["claimed"])
        self._waiting.pop(session_id, None)

    async def done(self, session_id: str, agent: Agent) -> None:
        """A resumed run ended: tell a late answer so; with history, keep the conversation."""
        store = self._checked(session_id)
        conversation = _snapshot(agent) if self.keeps_history else None
        await self._close(store, session_id, "answered", conversation)

    async def failed(self, session_id: str, run: WaitingRun) -> None:
        """A resumed run failed: nothing is left to answer; the conversation stays as it was."""
        await self._close(self._checked(session_id), session_id, "failed", run.snapshot)

    async def sweep(self) -> None:
        """Close questions past the answer time, and forget old outcomes and claims.

        Only a folder is swept: a bucket's own expiry rule does this there
        (docs/deploying.md), without every microVM listing the whole bucket.
        """
        self._swept_at = time.time()
        store = self._store()
        if not store.lists_everything:
            return
        with store.reachable():
            keys = await store.storage.list("threads/") + await store.storage.list("claims/")
            for key in keys:
                stored = await store.storage.read(key)
                record = _loaded(stored) if stored is not None else {}
                at = record.get("asked_at", record.get("at"))
                if not isinstance(at, int | float) or time.time() - at <= self.answer_within:
                    continue
                if "questions" in record:
                    session_id = key.removeprefix("threads/").removesuffix(".json")
                    await self._close(store, session_id, "expired", record.get("snapshot"))
                elif "snapshot" not in record:  # an old outcome or claim; never a conversation
                    await store.storage.delete(key)

    async def _close(
        self, store: RunStorage, session_id: str, outcome: str, snapshot: Any = None
    ) -> None:
        """Record how the run ended; without history, nothing of the run is kept but that."""
        self._waiting.pop(session_id, None)
        ended: dict[str, Any] = {"format": FORMAT, **_now(outcome=outcome)}
        if self.keeps_history and snapshot is not None:
            ended["snapshot"] = snapshot
        await self._write(store, session_id, ended)

    async def _index(self, store: RunStorage) -> OrderedDict[str, float]:
        """The waiting runs, read from a folder the first time it is used."""
        if store is self._indexed:
            return self._waiting
        self._indexed, self._waiting = store, OrderedDict()
        if store.lists_everything:
            found = []
            with store.reachable():
                for key in await store.storage.list("threads/"):
                    stored = await store.storage.read(key)
                    record = _loaded(stored) if stored is not None else {}
                    if "questions" in record:
                        session_id = key.removeprefix("threads/").removesuffix(".json")
                        found.append((_asked_at(record), session_id))
            self._waiting.update((session_id, at) for at, session_id in sorted(found))
        return self._waiting

    async def _read(self, store: RunStorage, session_id: str) -> dict | None:
        """The thread's record; ValueError when it is not one of this format."""
        with store.reachable():
            stored = await store.storage.read(_record(session_id))
        if stored is None:
            return None
        try:
            record = json.loads(stored)
        except ValueError as damage:
            raise ValueError(f"not JSON: {damage}") from None
        stored_format = record.get("format") if isinstance(record, dict) else None
        if stored_format != FORMAT:
            raise ValueError(
                f"written by another version of this agent (format {stored_format!r}; "
                f"this one reads {FORMAT})"
            )
        return record

    async def _write(self, store: RunStorage, session_id: str, record: dict) -> None:
        with store.reachable():
            await store.storage.write(_record(session_id), _json(record))

    def _checked(self, session_id: str) -> RunStorage:
        if not _SAFE_SESSION_ID.fullmatch(session_id):
            shown = session_id if len(session_id) <= 60 else session_id[:60] + "..."
            raise SessionIdError(
                f"session id {shown!r} cannot name stored state: use 1 to 200 letters, "
                "digits, '.', '_' and '-'"
            )
        return self._store()

    def _days(self) -> str:
        return f"{self.answer_within / 86400:g}"


def unreadable_history(damage: Exception) -> CannotContinue:
    return CannotContinue(
        f"The stored history of this thread cannot be read ({damage}), so nothing was sent "
        "to the model. It is kept for inspection; until it is repaired or moved aside, this "
        "thread cannot go on."
    )


def load(agent: Agent, snapshot: Any) -> None:
    """Restore a stored snapshot into a new agent; raises when it is not one."""
    if not isinstance(snapshot, dict):
        raise ValueError("the snapshot is missing")
    agent.load_snapshot(Snapshot.from_dict(decode_bytes_values(snapshot)))


def _snapshot(agent: Agent) -> dict:
    """Strands' own snapshot of the agent, as JSON (file bytes as base64)."""
    return encode_bytes_values(agent.take_snapshot(preset="session").to_dict())


_OUTCOMES = {
    "answered": (
        "Nothing to resume: these answers were already given, and the run resumed once "
        "(a double click, or a retried request). Send a new message to go on."
    ),
    "claimed": (
        "Nothing to resume: an earlier request already took these answers (a double "
        "click, a retried request, or a resume cut short by a restart). Send a new "
        "message to go on."
    ),
    "dropped": (
        "Cannot resume: this thread's question waited too long and was dropped (the "
        "agent keeps at most {max_waiting} waiting runs). Send a new message instead."
    ),
    "expired": (
        "Cannot resume: this question is more than {days} days old, and answers are "
        "taken for {days} days. Send a new message instead."
    ),
    "replaced": (
        "Nothing to resume: a newer message in this thread replaced this question. "
        "Send a new message to go on."
    ),
    "failed": (
        "Cannot resume: the run failed after it was resumed, so there is nothing left "
        "to answer. Send a new message instead."
    ),
    "earlier-version": (
        "Cannot resume: this question was asked by an earlier version of this agent, "
        "whose stored runs this version does not read. Send a new message, and the agent "
        "will ask again."
    ),
    "nothing": (
        "Nothing to resume in this thread: no run is waiting for an answer (it "
        "finished, a newer message replaced it, or a new deployment of the agent reset "
        "its storage). Send a new message instead."
    ),
}


def _asked_by_an_earlier_version(store: RunStorage, session_id: str) -> bool:
    """A question stored by release 0.3.0, in its own folder layout."""
    if not isinstance(store, FolderStorage):
        return False
    return (store.folder / f"session_{session_id}" / "questions.json").is_file()


def _record(session_id: str) -> str:
    return f"threads/{session_id}.json"


def _loaded(stored: bytes) -> dict:
    """A record as a dict, or an empty one when it is not one: damage is judged elsewhere."""
    try:
        record = json.loads(stored)
    except ValueError:
        return {}
    return record if isinstance(record, dict) else {}


def _asked_at(record: dict) -> float:
    try:
        return float(record["asked_at"])
    except (KeyError, TypeError, ValueError):
        return 0.0


def _now(**fields: str) -> dict:
    return {"at": time.time(), **fields}


def _json(data: dict) -> bytes:
    return json.dumps(data).encode()
