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
from .history import drop_open_question, session_manager
from .tools import FILES_FROM
from .wire import Resume, Turn, WireError, error_event, outbound_events, read_request

logger = logging.getLogger(__name__)

# Used when a request carries no session header (a bare curl, say).
LOCAL_SESSION = "local"


@dataclass
class _PendingRun:
    agent: Agent
    interrupt_ids: set[str]


class Conversations:
    """Answers Welt requests, one stream of renderable events per request."""

    def __init__(
        self,
        new_model: Callable[[], Model],
        new_agent: Callable[..., Agent] = build_agent,
        max_pending: int = 100,
        files_from: set[str] = FILES_FROM,
    ) -> None:
        self._new_model = new_model
        self._new_agent = new_agent
        self._files_from = files_from
        self._max_pending = max_pending
        self._pending: OrderedDict[str, _PendingRun] = OrderedDict()
        # Sessions whose run was dropped for room, so a late answer hears why.
        self._evicted: OrderedDict[str, None] = OrderedDict()

    async def respond(self, payload: Any, session_id: str | None) -> AsyncIterator[dict]:
        """Run a turn or resume an interrupted run; failures end in an `error` event."""
        session_id = session_id or LOCAL_SESSION
        try:
            request = read_request(payload)
        except WireError as problem:
            logger.warning("refused a payload in session %s: %s", session_id, problem)
            yield error_event(f"Refused the request: {problem}.")
            return

        if isinstance(request, Resume):
            problem = self._resume_problem(session_id, request)
            if problem:
                yield error_event(problem)
                return
            agent, prompt = self._pending.pop(session_id).agent, request.strands_input()
        else:
            # A new message in the thread supersedes any question still open.
            self._pending.pop(session_id, None)
            self._evicted.pop(session_id, None)
            try:
                agent, prompt = self._start_turn(request, session_id)
            except WireError as problem:
                yield error_event(f"Refused the request: {problem}.")
                return

        async for event in self._stream(agent, prompt, session_id):
            yield event

    def _start_turn(self, request: Turn, session_id: str) -> tuple[Agent, Any]:
        """A fresh agent and its prompt; with stored history, the new messages join it."""
        manager = session_manager(session_id)
        if manager is None:
            return self._new_agent(self._new_model(), request.history), request.prompt
        agent = self._new_agent(self._new_model(), [], session_manager=manager)
        drop_open_question(agent)
        return agent, [*request.history, {"role": "user", "content": request.prompt}]

    async def _stream(self, agent: Agent, prompt: Any, session_id: str) -> AsyncIterator[dict]:
        """Stream one run; the agent's stream is always closed, so it never stays locked."""

        async def keep_if_interrupted(stream: AsyncIterator[dict]) -> AsyncIterator[dict]:
            async for event in stream:
                result = event.get("result")
                if result is not None and result.stop_reason == "interrupt":
                    # Stored before the interrupt events go out, so an answer can never
                    # arrive before the run it resumes.
                    self._keep(session_id, agent, {i.id for i in result.interrupts})
                yield event

        try:
            async with (
                aclosing(agent.stream_async(prompt)) as raw,
                aclosing(keep_if_interrupted(raw)) as kept,
                aclosing(outbound_events(kept, agent, self._files_from)) as events,
            ):
                async for event in events:
                    yield event
        except Exception as failure:
            logger.exception("run failed in session %s", session_id)
            self._pending.pop(session_id, None)
            yield error_event(f"The agent failed: {type(failure).__name__}: {failure}")

    def _keep(self, session_id: str, agent: Agent, interrupt_ids: set[str]) -> None:
        self._pending[session_id] = _PendingRun(agent, interrupt_ids)
        self._pending.move_to_end(session_id)
        while len(self._pending) > self._max_pending:
            evicted, _ = self._pending.popitem(last=False)
            logger.warning("dropped the interrupted run of session %s to make room", evicted)
            self._evicted[evicted] = None
            while len(self._evicted) > self._max_pending:
                self._evicted.popitem(last=False)

    def _resume_problem(self, session_id: str, request: Resume) -> str | None:
        """Why these answers cannot resume this session's run, or None if they can."""
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
        answered = set(request.answers)
        unknown = sorted(answered - run.interrupt_ids)
        missing = sorted(run.interrupt_ids - answered)
        if unknown:
            return f"Cannot resume: {', '.join(unknown)} is not a question this run asked."
        if missing:
            return f"Cannot resume: {', '.join(missing)} still needs an answer."
        return None
