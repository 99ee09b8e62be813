"""Conversation history kept by the agent, for Welt's AGENT_MANAGES_HISTORY.

With that Welt setting, a request carries only the messages after Welt's own
last reply, so the agent has to remember the rest. A Strands session
manager, keyed by the AgentCore session id (one per Slack thread), restores
the thread into each fresh agent and saves what the run adds. Off (the
default), Welt sends the whole thread and nothing is stored.

Files are kept under SESSION_STORAGE_DIR. On AgentCore Runtime that disk
lives as long as the session's microVM (8 hours at most); for history that
must outlive it, use Strands' S3SessionManager here instead.
"""

import os
import re

from strands import Agent
from strands.session.file_session_manager import FileSessionManager
from strands.session.session_manager import SessionManager

from .settings import AGENT_MANAGES_HISTORY

_SAFE_SESSION_ID = re.compile(r"[A-Za-z0-9_.-]{1,200}")


class SessionIdError(ValueError):
    """A session id that cannot name a folder of stored history."""


def session_manager(session_id: str) -> SessionManager | None:
    """The thread's stored history, or None when Welt sends the whole thread."""
    if not AGENT_MANAGES_HISTORY:
        return None
    if not _SAFE_SESSION_ID.fullmatch(session_id):
        raise SessionIdError(
            f"session id {session_id!r} cannot name a stored history: use letters, digits, "
            "'.', '_' and '-'"
        )
    storage = os.environ.get("SESSION_STORAGE_DIR", ".sessions")
    return FileSessionManager(session_id=session_id, storage_dir=storage)


def drop_open_question(agent: Agent) -> None:
    """Let a new message through when the stored thread still waits for an answer.

    A new message while a question is open means the thread moved on. The
    restored agent is still interrupted, and Strands would refuse anything
    but answers, in this thread, for good. Clearing the interrupt lets the
    message through; Strands then closes the unanswered tool calls itself
    ("Tool was interrupted.") before the model sees the new message. Strands
    has no public call for this, so the private state is read defensively.
    """
    interrupts = getattr(agent, "_interrupt_state", None)
    if interrupts is not None and interrupts.activated:
        interrupts.deactivate()
