"""Where a thread's state lives between requests, so an answer given hours later still resumes.

A person may answer a Slack question after lunch. By then AgentCore has
stopped the session's microVM (15 idle minutes by default), or the local
server has restarted, and everything held in memory is gone. So a run that
stops on its questions is kept on disk, in one folder per thread: its
messages, agent.state (a tool's memo, the gate's fingerprints) and Strands'
interrupt state, in Strands' own session format (`run.json`; with
AGENT_MANAGES_HISTORY, the files of the FileSessionManager that keeps the
history), and `questions.json`, which records what was asked, and when.
Answers claim that record by renaming it, which only one request can do, so
a double click or a retried request never runs a tool twice. When a run
completes, its files go, unless they are the thread's history.
"""

import json
import logging
import os
import re
import shutil
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands import Agent
from strands.agent.state import AgentState
from strands.session.file_session_manager import FileSessionManager
from strands.types.session import SessionAgent, decode_bytes_values, encode_bytes_values

from .settings import (
    AGENT_MANAGES_HISTORY,
    ANSWER_WITHIN_DAYS,
    LOCAL_SESSION_STORAGE,
    MAX_PENDING_RUNS,
)

logger = logging.getLogger(__name__)

# The layout of questions.json. A stored run of another format is refused,
# not guessed at: an update that changes it says so in its changelog.
FORMAT = 1

_SAFE_SESSION_ID = re.compile(r"[A-Za-z0-9_.-]{1,200}")
_RUN = "run.json"
_QUESTIONS = "questions.json"
_CLAIMED = "questions.claimed.json"
_OUTCOME = "outcome.json"


class SessionIdError(ValueError):
    """A session id that cannot name a folder on disk."""


class CannotContinue(Exception):
    """A request that stored state cannot serve; the message is for the human."""


@dataclass(frozen=True)
class WaitingRun:
    questions: dict[str, Any]  # interrupt id -> the reason the human saw
    asked_at: float


def storage_dir() -> Path:
    """SESSION_STORAGE_DIR (on AgentCore, its session storage), else the local folder."""
    return Path(os.environ.get("SESSION_STORAGE_DIR") or LOCAL_SESSION_STORAGE).expanduser()


class SessionStore:
    """The stored runs (and, with history, the conversations) of every thread."""

    # How often stale runs and old outcomes are looked for on disk.
    SWEEP_EVERY_SECONDS = 3600

    def __init__(
        self,
        keeps_history: bool = AGENT_MANAGES_HISTORY,
        answer_within_days: float = ANSWER_WITHIN_DAYS,
        max_waiting: int = MAX_PENDING_RUNS,
    ) -> None:
        self.keeps_history = keeps_history
        self.answer_within = answer_within_days * 24 * 3600
        self.max_waiting = max_waiting
        # The folders of the runs waiting for answers, oldest first, read
        # from disk once per storage root and kept current after that.
        self._waiting: OrderedDict[Path, None] = OrderedDict()
        self._indexed_root: Path | None = None
        self._swept_at = 0.0

    def manager(self, session_id: str) -> FileSessionManager:
        """The Strands session manager that keeps this thread's agent on disk."""
        self._folder(session_id)  # refuses an id unfit for a folder name
        return FileSessionManager(session_id=session_id, storage_dir=str(self._root()))

    def begin_turn(self, session_id: str) -> None:
        """A new message: any open question is closed, and without history the thread starts over.

        Welt sends the whole thread when the agent keeps no history, so
        nothing stored for an earlier turn is needed again.
        """
        folder = self._folder(session_id)
        self._unindex(folder)
        if self.keeps_history:
            for name in (_QUESTIONS, _CLAIMED, _OUTCOME):
                (folder / name).unlink(missing_ok=True)
        else:
            shutil.rmtree(folder, ignore_errors=True)

    def keep(self, session_id: str, questions: dict[str, Any], agent: Agent | None = None) -> None:
        """Save a run that stopped on its questions, then record the questions.

        Pass the agent when it ran without a session manager: its messages,
        state and interrupt state are written now, in one file. The record
        comes last, so a crash in between leaves no question that cannot be
        resumed.
        """
        if time.time() - self._swept_at > self.SWEEP_EVERY_SECONDS:
            self.sweep()
        folder = self._folder(session_id)
        if agent is not None:
            _write_atomically(folder / _RUN, _snapshot(agent))
        record = {"format": FORMAT, "asked_at": time.time(), "questions": questions}
        _write_atomically(folder / _QUESTIONS, record)
        (folder / _CLAIMED).unlink(missing_ok=True)
        waiting = self._index()
        waiting[folder] = None
        waiting.move_to_end(folder)
        while len(waiting) > self.max_waiting:
            oldest, _ = waiting.popitem(last=False)
            logger.warning("dropped the waiting run of %s to make room", oldest.name)
            self._close(oldest, "dropped")

    def restore(self, session_id: str, agent: Agent) -> None:
        """Load a run kept without history into a new agent."""
        stored = json.loads((self._folder(session_id) / _RUN).read_text())
        kept = SessionAgent(**decode_bytes_values(stored["agent"]))
        agent.state = AgentState(kept.state)
        kept.initialize_internal_state(agent)
        agent.messages = decode_bytes_values(stored["messages"])

    def waiting(self, session_id: str) -> WaitingRun:
        """The run waiting for answers in this thread; CannotContinue says why there is none."""
        folder = self._folder(session_id)
        record_path = folder / _QUESTIONS
        if not record_path.exists():
            raise CannotContinue(self._why_nothing_waits(folder))
        try:
            record = json.loads(record_path.read_text())
            stored_format = record.get("format") if isinstance(record, dict) else None
            if stored_format != FORMAT:
                raise CannotContinue(
                    "Cannot resume: the stored run was written by another version of this "
                    f"agent (format {stored_format!r}; this one reads {FORMAT}). "
                    "Send a new message to start again."
                )
            run = WaitingRun(dict(record["questions"]), float(record["asked_at"]))
            if not (folder / ("session.json" if self.keeps_history else _RUN)).is_file():
                raise ValueError("the run's own files are missing")
        except CannotContinue:
            logger.warning("stored run of session %s is of another format", session_id)
            raise
        except (OSError, ValueError, KeyError, TypeError) as damage:
            logger.warning("stored run of session %s is damaged: %s", session_id, damage)
            raise CannotContinue(
                f"Cannot resume: the stored run of this thread is damaged ({damage}), so it "
                "was not resumed. Send a new message to start again."
            ) from None
        if time.time() - run.asked_at > self.answer_within:
            self._close(folder, "expired")
            raise CannotContinue(_OUTCOMES["expired"].format(days=self._days()))
        return run

    def claim(self, session_id: str) -> None:
        """Take the waiting run for these answers; only one request can."""
        folder = self._folder(session_id)
        try:
            os.rename(folder / _QUESTIONS, folder / _CLAIMED)
        except FileNotFoundError:
            raise CannotContinue(_OUTCOMES["claimed"]) from None
        self._unindex(folder)

    def done(self, session_id: str, outcome: str = "answered") -> None:
        """A resumed run ended: say so to a late duplicate, and free what it held."""
        self._close(self._folder(session_id), outcome)

    def sweep(self) -> None:
        """Forget outcomes past the answer time, and close questions past it."""
        self._swept_at = time.time()
        for outcome in self._root().glob(f"session_*/{_OUTCOME}"):
            if _age(outcome) > self.answer_within:
                if self.keeps_history:
                    outcome.unlink(missing_ok=True)
                else:
                    shutil.rmtree(outcome.parent, ignore_errors=True)
        for folder in list(self._index()):
            if _age(folder / _QUESTIONS) > self.answer_within:
                self._close(folder, "expired")
        # A resume cut short (the process died after the claim) leaves its claim.
        for claimed in self._root().glob(f"session_*/{_CLAIMED}"):
            if _age(claimed) > self.answer_within:
                self._close(claimed.parent, "failed")

    def _unindex(self, folder: Path) -> None:
        """A run no longer waits; an index not read yet will not list it either."""
        if folder.parent == self._indexed_root:
            self._waiting.pop(folder, None)

    def _index(self) -> OrderedDict[Path, None]:
        """The waiting runs, read from disk the first time a storage root is used."""
        root = self._root()
        if root != self._indexed_root:
            records = sorted(root.glob(f"session_*/{_QUESTIONS}"), key=_mtime)
            self._waiting = OrderedDict((record.parent, None) for record in records)
            self._indexed_root = root
        return self._waiting

    def _close(self, folder: Path, outcome: str) -> None:
        """Leave only the outcome (and, with history, the conversation)."""
        self._unindex(folder)
        if self.keeps_history:
            for name in (_QUESTIONS, _CLAIMED):
                (folder / name).unlink(missing_ok=True)
        else:
            shutil.rmtree(folder, ignore_errors=True)
        _write_atomically(folder / _OUTCOME, {"outcome": outcome})

    def _why_nothing_waits(self, folder: Path) -> str:
        if (folder / _CLAIMED).exists():
            return _OUTCOMES["claimed"]
        try:
            outcome = json.loads((folder / _OUTCOME).read_text())["outcome"]
            return _OUTCOMES[outcome].format(days=self._days(), max_waiting=self.max_waiting)
        except (OSError, ValueError, KeyError, TypeError):
            return _OUTCOMES["nothing"]

    def _days(self) -> str:
        return f"{self.answer_within / 86400:g}"

    def _root(self) -> Path:
        return storage_dir()

    def _folder(self, session_id: str) -> Path:
        if not _SAFE_SESSION_ID.fullmatch(session_id):
            shown = session_id if len(session_id) <= 60 else session_id[:60] + "..."
            raise SessionIdError(
                f"session id {shown!r} cannot name a folder of stored state: use 1 to 200 "
                "letters, digits, '.', '_' and '-'"
            )
        # The folder FileSessionManager uses for this session id.
        return self._root() / f"session_{session_id}"


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
    "failed": (
        "Cannot resume: the run failed after it was resumed, so there is nothing left "
        "to answer. Send a new message instead."
    ),
    "nothing": (
        "Nothing to resume in this thread: no run is waiting for an answer (it "
        "finished, a newer message replaced it, or a new deployment of the agent reset "
        "its storage). Send a new message instead."
    ),
}


def _snapshot(agent: Agent) -> dict:
    """The agent as Strands' session types keep it, file bytes as base64."""
    kept = SessionAgent.from_agent(agent)
    return {
        "agent": encode_bytes_values({name: getattr(kept, name) for name in _KEPT}),
        "messages": encode_bytes_values(agent.messages),
    }


# What a SessionAgent is made of, less the timestamps it sets itself.
_KEPT = ("agent_id", "state", "conversation_manager_state", "_internal_state")


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _age(path: Path) -> float:
    return time.time() - _mtime(path) if path.exists() else 0.0


def _write_atomically(path: Path, data: dict) -> None:
    """Write a whole file or none of it: a process killed mid-write leaves the old one.

    No fsync: what a killed process wrote is in the kernel's cache and
    survives it; a stopped microVM's storage is flushed long before.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.partial")
    partial.write_text(json.dumps(data))
    os.replace(partial, path)
