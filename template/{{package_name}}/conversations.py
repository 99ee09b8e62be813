"""Runs one request of a Slack thread, and keeps interrupted runs until answered.

Welt resumes an interrupted run with a second request that carries only the
answers, so the interrupted agent must outlive the first request. On
AgentCore every session has its own microVM, but the local server is one
process for all threads: runs are kept per session id, and the store is
bounded so a long-lived process does not grow without limit.
"""

import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

from strands import Agent
from strands.models import Model

from .agent import build_agent
from .history import SessionIdError, drop_open_question, session_manager
from .tools.registry import Registry
from .wire import answer_problem, error_event, payload_problem, reply_events

logger = logging.getLogger(__name__)

# Used when a request carries no session header (a bare curl, say).
LOCAL_SESSION = "local"


@dataclass
class _PendingRun:
    agent: Agent
    questions: dict[str, Any]  # interrupt id -> the reason the human saw


class Conversations:
    """Answers Welt requests, one stream of renderable events per request."""

    def __init__(
        self,
        new_model: Callable[[], Model],
        registry: Registry,
        new_agent: Callable[..., Agent] = build_agent,
        max_pending: int = 100,
    ) -> None:
        self._new_model = new_model
        self._registry = registry
        self._new_agent = new_agent
        self._max_pending = max_pending
        self._pending: OrderedDict[str, _PendingRun] = OrderedDict()
        # Sessions whose run was dropped for room, so a late answer hears why.
        self._evicted: OrderedDict[str, None] = OrderedDict()

    async def respond(self, payload: Any, session_id: str | None) -> AsyncIterator[dict]:
        """Payload, schema, agent, events: every failure ends in one `error` event."""
        session_id = session_id or LOCAL_SESSION
        problem = payload_problem(payload)
        if problem:
            logger.warning("refused a payload in session %s: %s", session_id, problem)
            yield error_event(f"Refused the request: {problem}.")
            return

        if "interrupt_responses" in payload:
            problem = self._resume_problem(session_id, payload["interrupt_responses"])
            if problem:
                yield error_event(problem)
                return
            agent = self._pending.pop(session_id).agent
        else:
            # A new message in the thread supersedes any question still open.
            self._pending.pop(session_id, None)
            self._evicted.pop(session_id, None)
            try:
                agent = self._fresh_agent(session_id)
            except SessionIdError as problem:
                yield error_event(f"Refused the request: {problem}.")
                return

        async for event in self._stream(agent, payload, session_id):
            yield event

    def _fresh_agent(self, session_id: str) -> Agent:
        """A new agent for a turn; with stored history, the thread so far is restored into it."""
        manager = session_manager(session_id)
        if manager is None:
            return self._new_agent(self._new_model(), self._registry)
        agent = self._new_agent(self._new_model(), self._registry, session_manager=manager)
        drop_open_question(agent)
        return agent

    async def _stream(self, agent: Agent, payload: dict, session_id: str) -> AsyncIterator[dict]:
        """Stream one run; the agent's stream is always closed, so it never stays locked.

        The interrupt events come last; they are held until the run is
        stored, so an answer can never arrive before the run it resumes.
        """
        questions: dict[str, Any] = {}
        try:
            async with aclosing(reply_events(agent, payload, self._registry.files_from)) as events:
                async for event in events:
                    if "interrupt" in event:
                        questions[event["interrupt"]["id"]] = event["interrupt"]
                        continue
                    yield event
        except Exception as failure:
            logger.exception("run failed in session %s", session_id)
            yield error_event(f"The agent failed: {type(failure).__name__}: {failure}")
            return
        if questions:
            reasons = {interrupt_id: asked["reason"] for interrupt_id, asked in questions.items()}
            self._keep(session_id, _PendingRun(agent, reasons))
            for asked in questions.values():
                yield {"interrupt": asked}

    def _keep(self, session_id: str, run: _PendingRun) -> None:
        self._pending[session_id] = run
        self._pending.move_to_end(session_id)
        while len(self._pending) > self._max_pending:
            evicted, _ = self._pending.popitem(last=False)
            logger.warning("dropped the interrupted run of session %s to make room", evicted)
            self._evicted[evicted] = None
            while len(self._evicted) > self._max_pending:
                self._evicted.popitem(last=False)

    def _resume_problem(self, session_id: str, answers: dict[str, dict]) -> str | None:
        """Why these answers cannot resume this session's run, or None if they can.

        A refused answer loses nothing: the run keeps waiting for a good one.
        """
        run = self._pending.get(session_id)
        if run is None and session_id in self._evicted:
            return (
                "Cannot resume: this thread's question waited too long and was dropped "
                f"(the agent keeps at most {self._max_pending} waiting runs). "
                "Send a new message instead."
            )
        if run is None:
            return (
                "Nothing to resume in this thread: no run is waiting for an answer "
                "(it finished, was replaced by a newer message, was dropped to make "
                "room, or the agent restarted). Send a new message instead."
            )
        unknown = sorted(set(answers) - set(run.questions))
        missing = sorted(set(run.questions) - set(answers))
        if unknown:
            return f"Cannot resume: {', '.join(unknown)} is not a question this run asked."
        if missing:
            return f"Cannot resume: {', '.join(missing)} still needs an answer."
        for interrupt_id, answer in answers.items():
            problem = answer_problem(run.questions[interrupt_id], answer)
            if problem:
                return (
                    f"Cannot resume: the answer to {interrupt_id} was refused: {problem}. "
                    "The question is still open."
                )
        return None
