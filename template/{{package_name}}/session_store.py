"""Where a thread's state lives between requests, so an answer given hours later still resumes.

A person may answer a Slack question after lunch. By then AgentCore has
stopped the session's microVM (15 idle minutes by default), or the local
server has restarted, and everything held in memory is gone. So a run that
stops on its questions is kept on disk: a Strands FileSessionManager holds
its messages, agent.state (a tool's memo, the gate's fingerprints) and
Strands' interrupt state, and `questions.json` beside them records what was
asked, and when. Answers claim that record by renaming it, which only one
request can do, so a double click or a retried request never runs a tool
twice. When a run completes, its files go, unless the agent keeps the
thread's history (AGENT_MANAGES_HISTORY), which lives in the same folder.
"""

import json
import logging
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands import Agent
from strands.session.file_session_manager import FileSessionManager

from .settings import (
    AGENT_MANAGES_HISTORY,
    AGENTCORE_SESSION_STORAGE,
    ANSWER_WITHIN_DAYS,
    LOCAL_SESSION_STORAGE,
    MAX_PENDING_RUNS,
)

logger = logging.getLogger(__name__)

# The layout of questions.json. A stored run of another format is refused,
# not guessed at: an update that changes it says so in its changelog.
FORMAT = 1

_SAFE_SESSION_ID = re.compile(r"[A-Za-z0-9_.-]{1,200}")
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
    """SESSION_STORAGE_DIR, else AgentCore's session storage when mounted, else the local folder."""
    configured = os.environ.get("SESSION_STORAGE_DIR")
    if configured:
        return Path(configured)
    if Path(AGENTCORE_SESSION_STORAGE).is_dir():
        return Path(AGENTCORE_SESSION_STORAGE)
    return Path(LOCAL_SESSION_STORAGE).expanduser()


class SessionStore:
    """The stored runs (and, with history, the conversations) of every thread."""

    def __init__(
        self,
        keeps_history: bool = AGENT_MANAGES_HISTORY,
        answer_within_days: float = ANSWER_WITHIN_DAYS,
        max_waiting: int = MAX_PENDING_RUNS,
    ) -> None:
        self.keeps_history = keeps_history
        self.answer_within = answer_within_days * 24 * 3600
        self.max_waiting = max_waiting

    def manager(self, session_id: str) -> FileSessionManager:
        """The Strands session manager that keeps this thread's agent on disk."""
        return FileSessionManager(session_id=session_id, storage_dir=str(self._root()))

    def begin_turn(self, session_id: str) -> None:
        """A new message: any open question is closed, and without history the thread starts over.

        Welt sends the whole thread when the agent keeps no history, so
        nothing stored for an earlier turn is needed again.
        """
        folder = self._folder(session_id)
        if self.keeps_history:
            for name in (_QUESTIONS, _CLAIMED, _OUTCOME):
                (folder / name).unlink(missing_ok=True)
        else:
            shutil.rmtree(folder, ignore_errors=True)

    def keep(self, session_id: str, questions: dict[str, Any], agent: Agent | None) -> None:
        """Save a run that stopped on its questions, then record the questions.

        Pass the agent when it ran without a session manager: its messages,
        state and interrupt state are written now. The record comes last, so
        a crash in between leaves no question that cannot be resumed.
        """
        folder = self._folder(session_id)
        if agent is not None:
            self.manager(session_id).initialize(agent)
        record = {"format": FORMAT, "asked_at": time.time(), "questions": questions}
        _write_atomically(folder / _QUESTIONS, record)
        (folder / _CLAIMED).unlink(missing_ok=True)
        self.sweep()

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
            if not (folder / "session.json").is_file():
                raise ValueError("the run's session files are missing")
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
            raise CannotContinue(_OUTCOMES["answered"]) from None

    def done(self, session_id: str, outcome: str = "answered") -> None:
        """A resumed run ended: say so to a late duplicate, and free what it held."""
        self._close(self._folder(session_id), outcome)

    def sweep(self) -> None:
        """Close questions past their time, and keep at most max_waiting runs waiting."""
        root = self._root()
        if not root.is_dir():
            return
        waiting = []
        for folder in root.glob("session_*"):
            record = folder / _QUESTIONS
            outcome = folder / _OUTCOME
            try:
                if record.exists():
                    waiting.append((record.stat().st_mtime, folder))
                elif outcome.exists() and _age(outcome) > self.answer_within:
                    self._forget(folder)
            except OSError:
                continue  # another request is changing it
        waiting.sort()
        for asked_at, folder in waiting:
            if time.time() - asked_at > self.answer_within:
                self._close(folder, "expired")
        for _, folder in waiting[: max(0, len(waiting) - self.max_waiting)]:
            if folder.exists():
                logger.warning("dropped the waiting run of %s to make room", folder.name)
                self._close(folder, "dropped")

    def _close(self, folder: Path, outcome: str) -> None:
        """Leave only the outcome (and, with history, the conversation)."""
        if self.keeps_history:
            for name in (_QUESTIONS, _CLAIMED):
                (folder / name).unlink(missing_ok=True)
        else:
            shutil.rmtree(folder, ignore_errors=True)
        _write_atomically(folder / _OUTCOME, {"outcome": outcome})

    def _forget(self, folder: Path) -> None:
        if self.keeps_history:
            (folder / _OUTCOME).unlink(missing_ok=True)
        else:
            shutil.rmtree(folder, ignore_errors=True)

    def _why_nothing_waits(self, folder: Path) -> str:
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
            raise SessionIdError(
                f"session id {session_id!r} cannot name a folder of stored state: use "
                "letters, digits, '.', '_' and '-'"
            )
        # The folder FileSessionManager uses for this session id.
        return self._root() / f"session_{session_id}"


_OUTCOMES = {
    "answered": (
        "Nothing to resume: these answers were already given, and the run resumed once "
        "(a double click, or a retried request). Send a new message to go on."
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


def _age(path: Path) -> float:
    return time.time() - path.stat().st_mtime


def _write_atomically(path: Path, data: dict) -> None:
    """Write a whole file or none of it: a crash mid-write leaves the old one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.partial")
    with partial.open("w") as file:
        json.dump(data, file)
        file.flush()
        os.fsync(file.fileno())
    os.replace(partial, path)
