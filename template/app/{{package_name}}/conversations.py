"""Runs one request of a Slack thread: a new turn, or the answers that resume a stored run.

Welt resumes an interrupted run with a second request that carries only the
answers, maybe hours later, maybe in another process. A run that stops on
its questions is therefore saved to disk before they go out
(session_store.py). The process also holds on to the agent, and resumes it
directly while it can; after a restart, or once it has let go, the run is
restored from disk. Either way the stored record is claimed first, so only
one delivery of the answers resumes the run.
Requests of one thread are served one at a time, so two deliveries of the
same answers cannot both resume the run.
"""

import asyncio
import logging
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from typing import Any

from strands import Agent
from strands.models import Model

from .agent import build_agent
from .run_limits import new_turn
from .session_store import CannotContinue, SessionIdError, SessionStore
from .tools.registry import Registry
from .wire import answer_problem, as_welt_request, error_event, reply_events

logger = logging.getLogger(__name__)

# Used when a request carries no session header (a bare curl, say).
LOCAL_SESSION = "local"


class Conversations:
    """Answers Welt requests, one stream of renderable events per request."""

    def __init__(
        self,
        new_model: Callable[[], Model],
        registry: Registry,
        new_agent: Callable[..., Agent] = build_agent,
        store: SessionStore | None = None,
    ) -> None:
        self._new_model = new_model
        self._registry = registry
        self._new_agent = new_agent
        self.store = store or SessionStore()
        # Runs this process still holds, by session, oldest first: a resume
        # in the same process skips reading the run back from disk.
        self._held: OrderedDict[str, tuple[Agent, set[str]]] = OrderedDict()
        # One lock per thread while a request of it runs; gone when none does.
        self._turns: weakref.WeakValueDictionary = weakref.WeakValueDictionary()

    async def respond(self, payload: Any, session_id: str | None) -> AsyncIterator[dict]:
        """Payload, schema, agent, events: every failure ends in one `error` event."""
        session_id = session_id or LOCAL_SESSION
        payload, problem = as_welt_request(payload)
        if problem:
            logger.warning("refused a payload in session %s: %s", session_id, problem)
            yield error_event(f"Refused the request: {problem}.")
            return

        resuming = "interrupt_responses" in payload
        async with self._one_at_a_time(session_id):
            try:
                if resuming:
                    agent = self._resumed_agent(session_id, payload["interrupt_responses"])
                else:
                    agent = self._fresh_agent(session_id)
            except CannotContinue as refused:
                yield error_event(str(refused))
                return
            except SessionIdError as refused:
                yield error_event(f"Refused the request: {refused}.")
                return
            async for event in self._stream(agent, payload, session_id, resuming):
                yield event

    def _one_at_a_time(self, session_id: str) -> asyncio.Lock:
        lock = self._turns.get(session_id)
        if lock is None:
            lock = self._turns[session_id] = asyncio.Lock()
        return lock

    def _fresh_agent(self, session_id: str) -> Agent:
        """A new agent for a turn; with history, the thread so far is restored into it.

        Without history the agent writes nothing as it runs: Welt's payload
        carries the whole thread, and only a run that stops on questions is
        saved, when it stops.
        """
        self.store.begin_turn(session_id)
        self._held.pop(session_id, None)
        if not self.store.keeps_history:
            return self._new_agent(self._new_model(), self._registry)
        try:
            agent = self._restored(session_id)
        except Exception as damage:
            logger.warning("could not read the history of session %s", session_id, exc_info=True)
            raise CannotContinue(
                f"The stored history of this thread cannot be read ({damage}), so nothing "
                "was sent to the model. Its files are kept for inspection; until they are "
                "repaired or moved aside, this thread cannot go on."
            ) from None
        _drop_open_question(agent)
        new_turn(agent)
        return agent

    def _resumed_agent(self, session_id: str, answers: dict[str, dict]) -> Agent:
        """The stored run these answers resume, claimed for this request alone.

        A refused answer loses nothing: the run keeps waiting for a good one.
        """
        waiting = self.store.waiting(session_id)
        unknown = sorted(set(answers) - set(waiting.questions))
        missing = sorted(set(waiting.questions) - set(answers))
        if unknown:
            raise CannotContinue(
                f"Cannot resume: {', '.join(unknown)} is not a question this run asked."
            )
        if missing:
            raise CannotContinue(f"Cannot resume: {', '.join(missing)} still needs an answer.")
        for interrupt_id, answer in answers.items():
            problem = answer_problem(waiting.questions[interrupt_id], answer)
            if problem:
                raise CannotContinue(
                    f"Cannot resume: the answer to {interrupt_id} was refused: {problem}. "
                    "The question is still open."
                )
        self.store.claim(session_id)
        held, asked = self._held.pop(session_id, (None, None))
        if held is not None and asked == set(waiting.questions):
            return held  # the very run on disk: no need to read it back
        try:
            if self.store.keeps_history:
                agent = self._restored(session_id)
            else:
                agent = self._new_agent(self._new_model(), self._registry)
                self.store.restore(session_id, agent)
        except Exception as damage:
            logger.warning("could not restore the run of session %s", session_id, exc_info=True)
            self.store.done(session_id, "failed")
            raise CannotContinue(
                f"Cannot resume: the stored run of this thread could not be read ({damage}). "
                "Send a new message to start again."
            ) from None
        if not _is_interrupted(agent):
            self.store.done(session_id, "failed")
            raise CannotContinue(
                "Cannot resume: the stored run of this thread is not waiting for an answer "
                "(its files are damaged). Send a new message to start again."
            )
        return agent

    def _restored(self, session_id: str) -> Agent:
        """An agent with the thread's stored history, saving what the run adds."""
        manager = self.store.manager(session_id)
        return self._new_agent(self._new_model(), self._registry, session_manager=manager)

    async def _stream(
        self, agent: Agent, payload: dict, session_id: str, resuming: bool
    ) -> AsyncIterator[dict]:
        """Stream one run; the agent's stream is always closed, so it never stays locked.

        The interrupt events come last; they are held until the run's
        questions are stored, so an answer can never arrive before the run
        it resumes.
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
            if resuming:
                self.store.done(session_id, "failed")
            yield error_event(f"The agent failed: {type(failure).__name__}: {failure}")
            return
        if questions:
            reasons = {interrupt_id: asked["reason"] for interrupt_id, asked in questions.items()}
            # With history, the agent's session manager saved it as it ran.
            self.store.keep(session_id, reasons, None if self.store.keeps_history else agent)
            self._held[session_id] = (agent, set(reasons))
            self._held.move_to_end(session_id)
            while len(self._held) > self.store.max_waiting:
                self._held.popitem(last=False)
            for asked in questions.values():
                yield {"interrupt": asked}
        elif resuming:
            self.store.done(session_id)


def _is_interrupted(agent: Agent) -> bool:
    interrupts = getattr(agent, "_interrupt_state", None)
    return bool(interrupts is not None and interrupts.activated)


def _drop_open_question(agent: Agent) -> None:
    """Let a new message through when the stored thread still waits for an answer.

    A new message while a question is open means the thread moved on. The
    restored agent is still interrupted, and Strands would refuse anything
    but answers, in this thread, for good. Clearing the interrupt lets the
    message through; Strands then closes the unanswered tool calls itself
    ("Tool was interrupted.") before the model sees the new message. Strands
    has no public call for this, so the private state is read defensively.
    """
    if _is_interrupted(agent):
        agent._interrupt_state.deactivate()
