"""Runs one request of a Slack thread: a new turn, or the answers that resume a stored run.

Welt resumes an interrupted run with a second request that carries only the
answers, maybe hours later, maybe in another process. A run that stops on
its questions is therefore stored before they go out (runs/stored_runs.py). The
process also holds on to the agent, and resumes it directly while it can;
after a restart, or once it has let go, the run is restored from the store.
Either way the stored run is claimed first, so only one delivery of the
answers resumes it. Requests of one thread are served one at a time. An
agent whose run ended cleanly serves a later turn, reset (idle_agents.py).
Every run, a held one resumed included, calls the model a new agent would
get at that request: with a key from AgentCore Identity, the key held then,
so a run asked before a key was rotated resumes with the new one.
"""

import asyncio
import logging
import weakref
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from typing import Any

from strands import Agent
from strands.models import Model

from ..accounting.budgets import Accounting, Admission, OverBudget
from ..accounting.usage import model_id_of
from ..acting.user_tokens import USER_TOKENS, UserTokens, forget_progress
from ..gate.answerers import ANSWERING, OTHERS_ANSWERED, STARTED_BY, Answering, forget_answers
from ..gate.audit import record_turned_away
from ..gate.registry import Registry
from ..gate.run_limits import TurnCaps, new_turn
from ..identity import SlackUser
from ..memory.per_user import (
    SAID,
    UserMemory,
    forget_recalled,
    own_words,
    reply_of,
    shown_again,
    with_recalled,
)
from ..model.api_key import ApiKeyUnavailable, IdentityApiKey
from ..model.providers import refused_key
from ..platform.aws_errors import SignInNeeded
from ..platform.logs import shortened
from ..runs.outcomes import CannotContinue, SessionIdError, unreadable_history
from ..runs.record import Waiting, load
from ..runs.storage import StoreUnavailable
from ..runs.stored_runs import StoredRuns
from ..wire.answers import answers_problem
from ..wire.events import error_event, reply_events
from ..wire.payload import RefusedPayload, WeltAnswer, WeltMessage, WeltRequest, as_welt_request
from .idle_agents import IdleAgents

logger = logging.getLogger(__name__)

# Used when a request carries no session header (a bare curl, say).
LOCAL_SESSION = "local"


class Conversations:
    """Answers Welt requests, one stream of renderable events per request."""

    def __init__(
        self,
        new_model: Callable[[], Model],
        new_agent: Callable[[Model], Agent],
        registry: Registry,
        store: StoredRuns,
        caps: TurnCaps,
        *,
        on_agentcore: bool = False,
        approvers: frozenset[str] = frozenset(),
        memory: UserMemory | None = None,
        api_key: IdentityApiKey | None = None,
        accounting: Accounting | None = None,
        user_tokens: UserTokens | None = None,
    ) -> None:
        self._new_model = new_model
        self._user_tokens = user_tokens
        self._api_key = api_key
        self._accounting = accounting
        self._memory = memory
        self._on_agentcore = on_agentcore
        self._approvers = approvers
        self._registry = registry
        self._agents = IdleAgents(new_agent)
        self.store = store
        self._caps = caps
        # Runs this process still holds, by session, oldest first: a resume
        # in the same process skips reading the run back from the store.
        self._held: OrderedDict[str, tuple[Agent, str]] = OrderedDict()
        # One lock per thread while a request of it runs; gone when none does.
        self._turns: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    async def respond(
        self,
        payload: object,
        session_id: str | None,
        caller: SlackUser | None = None,
        workload_token: str | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        """Payload, schema, agent, events: every failure ends in one `error` event.

        The caller is the request's verified Slack user (platform/caller.py):
        who starts a run, or who answers it. The workload token is
        AgentCore's for this request, with which the model's key is fetched
        from AgentCore Identity when the deployment keeps it there, and a
        tool acting as the caller fetches their token (acting/user_tokens.py).
        """
        session_id = session_id or LOCAL_SESSION
        try:
            request = as_welt_request(payload, most_answers=self._caps.tool_calls)
        except RefusedPayload as problem:
            logger.warning("refused a payload in session %s: %s", session_id, problem)
            refusal = f"Refused the request: {problem}."
            self.turned_away(payload, session_id, caller, refusal)
            yield error_event(refusal)
            return
        if self._api_key is not None:
            # Before the store is touched: a resume that cannot get the key
            # claims nothing, and its question stays answerable.
            try:
                await self._api_key.fetch(workload_token)
            except ApiKeyUnavailable as unavailable:
                self.turned_away(request, session_id, caller, str(unavailable))
                yield one_line_event(session_id, unavailable)
                return

        async with self._one_at_a_time(session_id):
            run: Waiting | None
            answers: dict[str, WeltAnswer] = {}
            admission = Admission()
            key: str | None = None  # the model key the run calls with, if Identity gave it
            try:
                if "interrupt_responses" in request:
                    answers = request["interrupt_responses"]
                    agent, run, key = await self._resumed(session_id, answers, caller)
                else:
                    if self._accounting:  # before anything of the thread is touched
                        caller_id = caller.id if caller else None
                        admission = await self._accounting.admit(
                            session_id, caller_id, self._model_id
                        )
                    try:
                        (agent, key), run = await self._fresh(session_id, caller), None
                        await self._recall(agent, caller, request["messages"])
                    except BaseException:
                        if self._accounting:  # the turn never ran: its holds end
                            await self._accounting.release(admission)
                        raise
            except OverBudget as over_budget:
                yield {"data": str(over_budget)}
                return
            except (CannotContinue, StoreUnavailable, SessionIdError) as refused:
                yield error_event(told(refused))
                return
            except SignInNeeded as signed_out:  # the model is built on the first request
                yield one_line_event(session_id, signed_out)
                return
            except ApiKeyUnavailable as unavailable:
                yield one_line_event(session_id, unavailable)
                return
            answering = Answering(
                caller,
                self._on_agentcore,
                self._approvers,
                session_id,
                run.run if run else None,
                answers=len(answers),
                workload_token=workload_token,
            )
            streamed = self._stream(agent, request, session_id, run, answering, admission, key)
            async for event in streamed:
                yield event

    def _model_id(self) -> str:
        """The id of the model the next turn runs on: a dollar budget's share is priced by it."""
        return model_id_of(self._new_model())

    def turned_away(
        self, payload: object, session_id: str | None, caller: SlackUser | None, refusal: str
    ) -> None:
        """One audit line if the refused payload carried answers, whatever else was wrong with it.

        Called for every refusal before `_resumed`, which keeps its own:
        the schema's, a key that cannot be had, an MCP server that would
        not start (factory.py). None of them touches the store, so the
        question the answers were for stays answerable.
        """
        answered = sent_answers(payload)
        if answered is None:
            return
        record_turned_away(
            replayed=False,
            reason=refusal,
            sender=caller.id if caller else None,
            answered=answered,
            session=session_id or LOCAL_SESSION,
            run=None,
        )

    def _one_at_a_time(self, session_id: str) -> asyncio.Lock:
        lock = self._turns.get(session_id)
        if lock is None:
            lock = self._turns[session_id] = asyncio.Lock()
        return lock

    def _model(self) -> tuple[Model, str | None]:
        """The model a run calls, and the key it was built with: read together, nothing between.

        The key is the one this process holds now; with a key from AgentCore
        Identity, it is the one a refusal of this run's calls will name.
        """
        key = self._api_key.key if self._api_key is not None else None
        return self._new_model(), key

    async def _fresh(self, session_id: str, caller: SlackUser | None) -> tuple[Agent, str | None]:
        """A new agent for a turn, and its model's key; with history, the thread so far is restored.

        A new message closes any open question. Without history nothing is
        read back: Welt's payload carries the whole thread.
        """
        conversation = await self.store.begin_turn(session_id)
        self._held.pop(session_id, None)
        model, key = self._model()
        agent = self._agents.take(model)
        if conversation is None:
            return started_by(agent, caller), key
        asks_nothing = agent.take_snapshot(include=["interrupt_state"])
        try:
            load(agent, conversation)
        except Exception as damage:
            logger.warning("could not read the history of session %s", session_id, exc_info=True)
            raise unreadable_history(damage) from None
        # A new message while a question is open means the thread moved on, but
        # a restored agent still waiting for an answer would take nothing else.
        # The interrupt state of a new agent clears it, through Strands' public
        # snapshot API; Strands then closes the unanswered tool calls itself
        # ("Tool was interrupted.") before the model sees the new message.
        agent.load_snapshot(asks_nothing)
        new_turn(agent)
        forget_answers(agent)
        forget_progress(agent)
        return started_by(agent, caller), key

    async def _resumed(
        self, session_id: str, answers: dict[str, WeltAnswer], sender: SlackUser | None
    ) -> tuple[Agent, Waiting, str | None]:
        """The stored run these answers resume, claimed for this request alone, and its model's key.

        Answers turned away here never reach a question; each such request
        is an audit line that names who sent it. What can refuse them
        without spending the run (the store, the answers, a model that
        cannot be built) comes before the claim, so the question stays
        answerable; only a run that cannot be read back is lost. A run this
        process holds keeps its agent, but not the model it was asked with,
        whose key may have been rotated away since: it gets this request's,
        as a run read back from the store does.
        """
        waiting: Waiting | None = None
        try:
            waiting = await self.store.waiting(session_id)
            problem = answers_problem(waiting.questions, answers)
            if problem:
                raise CannotContinue(f"Cannot resume: {problem}.")
            model, key = self._model()
            await self.store.claim(session_id, waiting)
            agent, waiting = await self._restored(session_id, waiting, model)
            return agent, waiting, key
        except TURNED_AWAY as refused:
            record_turned_away(
                replayed=isinstance(refused, CannotContinue) and refused.replay,
                reason=told(refused),
                sender=sender.id if sender else None,
                answered=sorted(answers),
                session=session_id,
                run=waiting.run if waiting else None,
            )
            raise

    async def _restored(
        self, session_id: str, waiting: Waiting, model: Model
    ) -> tuple[Agent, Waiting]:
        """The claimed run's agent: the one this process holds, else one loaded from the store."""
        held, run = self._held.pop(session_id, (None, None))
        if held is not None and run == waiting.run:
            held.model = model  # the very run that was stored: no need to read it back
            return held, waiting
        agent = self._agents.take(model)
        try:
            load(agent, waiting.snapshot)
            shown_again(agent)
        except Exception as damage:
            logger.warning("could not restore the run of session %s", session_id, exc_info=True)
            await self.store.failed(session_id, waiting)
            raise CannotContinue(
                f"Cannot resume: the stored run of this thread could not be read ({damage}). "
                "Send a new message to start again."
            ) from None
        return agent, waiting

    async def _stream(
        self,
        agent: Agent,
        request: WeltRequest,
        session_id: str,
        resumed: Waiting | None,
        answering: Answering,
        admission: Admission,
        key: str | None = None,
    ) -> AsyncGenerator[dict[str, Any]]:
        """Stream one run; the agent's stream is always closed, so it never stays locked.

        The interrupt events come last: they are held until the run and its
        questions are stored, so an answer can never arrive before the run
        it resumes, and questions that could not be stored are never asked.
        Welt resumes with one identity, so a question only some people may
        answer goes out alone (`to_show`); the run's other questions stay
        pending in it and ask again when it resumes.
        """
        questions: dict[str, dict[str, Any]] = {}
        try:
            files_from = self._registry.files_from
            state: dict[str, Any] = {ANSWERING: answering}
            if self._user_tokens is not None:
                state[USER_TOKENS] = self._user_tokens
            replies = reply_events(
                agent, request, files_from, self._caps, state, tokens=admission.tokens
            )
            try:
                async with aclosing(replies) as events:
                    async for event in events:
                        if "interrupt" in event:
                            questions[event["interrupt"]["id"]] = event["interrupt"]
                            continue
                        yield event
            finally:  # a run that failed or was cut short was paid for too
                if self._accounting:
                    await self._accounting.count(
                        agent, session_id, resumed=bool(resumed), admission=admission
                    )
        except Exception as failure:
            if resumed:
                await self._quietly(self.store.failed(session_id, resumed))
            if isinstance(failure, SignInNeeded):
                yield one_line_event(session_id, failure)
                return
            if self._api_key is not None and refused_key(failure):
                yield self._refused_key_event(session_id, failure, key)
                return
            logger.exception("run failed in session %s", session_id)
            yield error_event(shortened(f"The agent failed: {type(failure).__name__}: {failure}"))
            return
        shown = answering.raised.to_show(list(questions), calls_of(agent))
        said = agent.state.get(SAID) if not questions else None
        try:
            if questions:
                reasons = {
                    interrupt_id: questions[interrupt_id]["reason"] for interrupt_id in shown
                }
                run = await self.store.keep(session_id, agent, reasons)
                self._hold(session_id, agent, run)
            else:
                # A kept conversation never carries one user's memories to the next.
                forget_recalled(agent)
                if resumed:
                    await self.store.done(session_id, agent)
                elif self.store.keeps_history:
                    await self.store.save(session_id, agent)
        except StoreUnavailable as unavailable:
            logger.warning("run store unavailable in session %s: %s", session_id, unavailable)
            if questions:
                yield error_event(
                    f"{unavailable} Its questions were not asked: no answer could resume the run."
                )
            else:
                yield error_event(str(unavailable))
            return
        if not questions:
            await self._remember(agent, session_id, said)  # after the store: it must not wait
            self._agents.give_back(agent)
        for interrupt_id in shown:
            yield {"interrupt": questions[interrupt_id]}

    def _refused_key_event(
        self, session_id: str, failure: Exception, key: str | None
    ) -> dict[str, str]:
        """The provider refused the key Identity gave: forget it, so the next request fetches it.

        A rotated key is then picked up at the next message; a wrong one
        keeps failing, in this one line, until the right one is stored.
        Only the key this run called with is forgotten: one fetched since,
        by another request, is kept.
        """
        assert self._api_key is not None
        self._api_key.forget(key)
        refused = ApiKeyUnavailable(
            f"The model provider refused the API key from AgentCore Identity (provider "
            f"{self._api_key.provider_name}; {type(failure).__name__}). If it was rotated, "
            "send the message again: the new key is fetched. Otherwise store the right key "
            "with `make api-key ENV=<env>`."
        )
        return one_line_event(session_id, refused)

    def _hold(self, session_id: str, agent: Agent, run: str) -> None:
        """Keep the agent for a resume in this process; the store's run id says it is the same."""
        self._held[session_id] = (agent, run)
        self._held.move_to_end(session_id)
        while len(self._held) > self.store.max_waiting:
            self._held.popitem(last=False)

    async def _recall(
        self, agent: Agent, caller: SlackUser | None, messages: list[WeltMessage]
    ) -> None:
        """Show a new run what its starter told the agent before; nothing without a verified one.

        Only the starter's own words of the turn are searched for, and kept
        in the run's state for `_remember`.
        """
        recalled = ""
        if self._memory is not None and caller is not None:
            said = own_words(messages, caller)
            agent.state.set(SAID, said)
            recalled = await self._memory.recall(caller, said)
        with_recalled(agent, recalled)

    async def _remember(self, agent: Agent, session_id: str, said: object) -> None:
        """Keep the finished run's words under the user who started it, if any.

        The starter, not whoever answered its last question: the memory is
        of what that person asked for, in their own words. The reply joins
        them only when nobody else answered a question of the run: it may
        quote what they typed.
        """
        starter = agent.state.get(STARTED_BY)
        if self._memory is None or not isinstance(starter, str) or not isinstance(said, str):
            return
        replied = "" if agent.state.get(OTHERS_ANSWERED) else reply_of(agent.messages)
        await self._memory.remember(SlackUser(starter), session_id, said, replied)

    @staticmethod
    async def _quietly(closing: Awaitable[None]) -> None:
        """Record an outcome if the store can; the failure is what the human must hear of."""
        try:
            await closing
        except StoreUnavailable:
            logger.warning("could not record the failed run's outcome", exc_info=True)


# What can refuse a resume before its run is resumed: each is an audit line.
TURNED_AWAY = (CannotContinue, StoreUnavailable, SessionIdError, SignInNeeded, ApiKeyUnavailable)


def told(refused: Exception) -> str:
    """The one line a thread is told of a request refused before its run resumed."""
    if isinstance(refused, SessionIdError):
        return f"Refused the request: {refused}."
    return str(refused)


def sent_answers(payload: object) -> list[str] | None:
    """The interrupt ids a payload answers, as sent; None when it sends no answers at all.

    Read from the payload as it came, however wrong its shape: a request
    that carries `interrupt_responses` is someone answering.
    """
    if not isinstance(payload, dict) or "interrupt_responses" not in payload:
        return None
    answers = payload["interrupt_responses"]
    return list(answers) if isinstance(answers, dict) else []


def one_line_event(session_id: str, failure: SignInNeeded | ApiKeyUnavailable) -> dict[str, str]:
    """One line in the log and one in the thread, for a failure whose message says what to do.

    Signing in, or mending the model's key, is for whoever runs the agent,
    and a traceback would only hide it.
    """
    logger.warning("session %s: %s", session_id, failure)
    return error_event(str(failure))


def calls_of(agent: Agent) -> list[str]:
    """The toolUseIds of the model's newest calls, in the order it made them."""
    for message in reversed(agent.messages):
        if message["role"] == "assistant":
            return [
                block["toolUse"]["toolUseId"] for block in message["content"] if "toolUse" in block
            ]
    return []


def started_by(agent: Agent, caller: SlackUser | None) -> Agent:
    """The agent, its state naming who started this run: stored with the run, read by STARTER."""
    if caller is None:
        agent.state.delete(STARTED_BY)
    else:
        agent.state.set(STARTED_BY, caller.id)
    return agent
