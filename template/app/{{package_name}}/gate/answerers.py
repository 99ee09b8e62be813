"""Who may answer a question, who provably did, and what happens when someone else does.

In Slack, anyone who can see a thread can press its buttons, so without a
check anyone in the channel could approve a deploy on a thread someone
else started. A question can therefore name who may answer it: anyone (the
default), the person whose message started the run, the APPROVERS of the
settings, or named Slack users.

Welt resumes a stop only once every question in it is answered, with one
identity: whoever answered last. Who answered each of the others is kept in
Slack, never sent. So the answerer of a question is known only when its
answer is the only one its request carries, and a restricted question is
always the only question of its stop: `to_show` holds back the others of
the same model turn, which ask again, unanswered, when the run resumes.
An answer whose answerer is not provably one who may give it is not taken,
and the question is asked again under a new name: Welt replaces a question's
buttons with a receipt once anybody answers, so without a new question
nobody could answer at all.

Strands runs an interrupted tool again from its first line on every resume,
so what a question has already been through (how often it was asked again,
an answer already judged) is kept in the agent's state, which is stored with
the run: an answer is judged once, by the request that carried it.
"""

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from strands.interrupt import InterruptException

from ..identity import SlackUser
from ..settings import SLACK_USER, ConfigurationError
from .audit import record_answer

if TYPE_CHECKING:
    from strands import Agent
    from strands.types.tools import ToolUse

# Where the request's answering context travels: Strands hands the
# invocation state to every hook and tool of the run, and stores none of it.
ANSWERING = "welt_answering"
# The agent-state key of the Slack user whose message started the run.
STARTED_BY = "welt_started_by"
# Set in the agent's state once anyone but the starter (or someone Welt did
# not name) answered a question of the run: its reply may hold their words.
OTHERS_ANSWERED = "welt_others_answered"
# Agent-state keys of answers already judged, per call and question.
_TAKEN = "answer_taken:"


@dataclass(frozen=True)
class AnsweredBy:
    """Who may answer one question; combine with `|`."""

    anyone: bool = False
    starter: bool = False
    approvers: bool = False
    users: frozenset[str] = frozenset()

    def __or__(self, other: "AnsweredBy") -> "AnsweredBy":
        return AnsweredBy(
            self.anyone or other.anyone,
            self.starter or other.starter,
            self.approvers or other.approvers,
            self.users | other.users,
        )


ANYONE = AnsweredBy(anyone=True)  # anyone who can see the thread: Welt's own rule
STARTER = AnsweredBy(starter=True)  # the person whose message started the run
APPROVERS = AnsweredBy(approvers=True)  # the Slack users the APPROVERS setting lists


def users(*user_ids: str) -> AnsweredBy:
    """These Slack users, named as Welt names them: users("slack:T0123:U0456")."""
    wrong = [user for user in user_ids if not SLACK_USER.fullmatch(user)]
    if wrong or not user_ids:
        given = wrong[0] if wrong else "no user"
        raise ConfigurationError(f"users() takes Slack users as slack:<team>:<user>, not {given!r}")
    return AnsweredBy(users=frozenset(user_ids))


class RaisedQuestions:
    """The questions one request's run raised: which call asked each, and which are restricted.

    Filled while the run's tools and hooks ask, concurrently, and read once
    the run has stopped, to choose the questions the stop shows.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_id: dict[str, tuple[str, bool]] = {}

    def raised(self, interrupt_id: str, tool_use_id: str, restricted: bool) -> None:
        with self._lock:
            self._by_id[interrupt_id] = (tool_use_id, restricted)

    def to_show(self, interrupt_ids: Sequence[str], call_order: Sequence[str]) -> list[str]:
        """The questions this stop shows: every open one, unless one is restricted.

        A restricted question is shown alone, so the one identity its
        answer comes with is its answerer's; the first in the order of the
        model's calls goes first, so the same one stays up until it is
        answered. The others stay pending in the run and ask again, still
        unanswered, when it resumes: every question gets its turn.
        """
        with self._lock:
            known = dict(self._by_id)
        restricted = [each for each in interrupt_ids if known.get(each, ("", False))[1]]
        if not restricted:
            return list(interrupt_ids)
        position = {call: index for index, call in enumerate(call_order)}

        def order(interrupt_id: str) -> tuple[int, int]:
            call = known[interrupt_id][0]
            return position.get(call, len(position)), interrupt_ids.index(interrupt_id)

        return [min(restricted, key=order)]


@dataclass(frozen=True)
class Answering:
    """What the request carrying an answer says about who sent it."""

    sender: SlackUser | None  # the request's verified user
    on_agentcore: bool
    approvers: frozenset[str]
    session: str
    run: str | None = None  # the stored run an answer resumes
    answers: int = 0  # how many answers the request carries (none for a new turn)
    raised: RaisedQuestions = field(default_factory=RaisedQuestions, compare=False)
    # AgentCore's workload access token for the sender, this request's alone:
    # a tool acting as the starter fetches their token with it
    # (acting/user_tokens.py). Travels with the request, never stored.
    workload_token: str | None = field(default=None, repr=False, compare=False)

    @property
    def answerer(self) -> SlackUser | None:
        """Who gave an answer of this request, where Welt proves it: the sender of a lone answer.

        With several answers Welt names only whoever answered last, so
        nobody is named; a restricted question is then not taken.
        """
        return self.sender if self.answers == 1 else None


class Asker(Protocol):
    """What can raise a question: a tool's ToolContext, or a hook's BeforeToolCallEvent."""

    @property
    def agent(self) -> "Agent": ...
    @property
    def tool_use(self) -> "ToolUse": ...
    @property
    def invocation_state(self) -> dict[str, Any]: ...
    def interrupt(self, name: str, reason: Any = None, response: Any = None) -> Any: ...


def answer_to(
    asker: Asker,
    name: str,
    reason: dict[str, Any],
    answered_by: AnsweredBy,
    *,
    fingerprint: str,
    yes_or_no: bool = False,
) -> tuple[Any, dict[str, str]]:
    """The answer to the question `name` from someone who may give it, and its audit attributes.

    Asks again until such an answer comes. Every answer, taken or refused,
    is one audit line (gate/audit.py), written by the request that carried
    it; the fingerprint is the digest of the input the human saw. For a
    yes-or-no question anything but the approve button is on record as denied.
    """
    state = asker.agent.state
    call = asker.tool_use["toolUseId"]
    asked_again = f"asked_again:{call}:{name}"
    times: int = state.get(asked_again) or 0
    asked_as = _name(name, times)
    answer = _ask(asker, asked_as, reason, restricted=not answered_by.anyone)
    taken = f"{_TAKEN}{call}:{asked_as}"
    judged: dict[str, str] | None = state.get(taken)
    if judged is not None:  # a later pass of the same call: judged when it came
        return answer, judged
    answering: Answering | None = asker.invocation_state.get(ANSWERING)
    starter = state.get(STARTED_BY)
    allowed = allowed_ids(answered_by, answering, starter)
    refused = why_not(answered_by, answering, allowed)
    answerer = answering.answerer if answering else None
    audited = record_answer(
        answer,
        refused=refused,
        tool=asker.tool_use["name"],
        fingerprint=fingerprint,
        answerer=answerer.id if answerer else None,
        sender=answering.sender.id if answering and answering.sender else None,
        answers=answering.answers if answering else 0,
        allowed=allowed,
        session=answering.session if answering else None,
        run=answering.run if answering else None,
        yes_or_no=yes_or_no,
    )
    if refused is None:
        state.delete(asked_again)
        state.set(taken, audited)
        if answerer is None or answerer.id != starter:
            state.set(OTHERS_ANSWERED, True)
        return answer, audited
    state.set(asked_again, times + 1)
    again = {**reason, "message": f"_{refused}_\n\n{reason.get('message', '')}"}
    _ask(asker, _name(name, times + 1), again, restricted=True)  # raises: the run stops on it
    raise RuntimeError(f"the question {name} was asked again but did not stop the run")


def forget_answers(agent: "Agent") -> None:
    """Drop the run's judged answers: a new turn's calls have ids of their own."""
    kept = agent.state.get() or {}
    for key in [key for key in kept if key.startswith(_TAKEN)]:
        agent.state.delete(key)
    agent.state.delete(OTHERS_ANSWERED)


def _ask(asker: Asker, name: str, reason: dict[str, Any], *, restricted: bool) -> Any:
    """The answer to the question, or the interrupt that stops the run, noted for `to_show`."""
    try:
        return asker.interrupt(name, reason=reason)
    except InterruptException as asking:
        answering: Answering | None = asker.invocation_state.get(ANSWERING)
        if answering is not None:
            answering.raised.raised(asking.interrupt.id, asker.tool_use["toolUseId"], restricted)
        raise


def why_not(
    answered_by: AnsweredBy, answering: Answering | None, allowed: frozenset[str] | None
) -> str | None:
    """None when the answerer may answer; else the one line the thread is told.

    `allowed` is `allowed_ids(...)` of the same question: None means anyone.
    """
    if allowed is None:
        return None
    who = _described(answered_by, allowed)
    if answering is not None and answering.answers > 1:
        return (
            f"Only {who} may answer this, and it was answered together with other questions, "
            "which Welt sends as one person's, so who gave this answer is unknown: it is "
            "asked again on its own."
        )
    answerer = answering.answerer if answering else None
    if answerer is None:
        if answering is not None and not answering.on_agentcore:
            return (
                f"Only {who} may answer this, and Welt's local mode names nobody: set "
                "LOCAL_USER_ID (slack:<team>:<user>) to answer it from this machine."
            )
        return (
            f"Only {who} may answer this, and no verified Slack user came with the answer, "
            "so it was not taken: Welt must invoke the agent with runtimeUserId, which "
            "needs bedrock-agentcore:InvokeAgentRuntimeForUser (docs/approvals.md)."
        )
    if answerer.id in allowed:
        return None
    return f"{answerer.mention}'s answer was not taken: only {who} may answer this."


def allowed_ids(
    answered_by: AnsweredBy, answering: Answering | None, started_by: str | None
) -> frozenset[str] | None:
    """The Slack users who may answer; None means anyone."""
    if answered_by.anyone:
        return None
    allowed = set(answered_by.users)
    if answered_by.approvers and answering is not None:
        allowed |= answering.approvers
    if answered_by.starter and started_by:
        allowed.add(started_by)
    return frozenset(allowed)


def _described(answered_by: AnsweredBy, allowed: frozenset[str]) -> str:
    named = sorted(SlackUser(user).mention for user in allowed)
    if answered_by.starter and not named:
        return "the person who started this run (no verified Slack user started it)"
    if not named:
        return "the approvers this agent lists (APPROVERS lists nobody)"
    return ", ".join(named[:-1]) + (" or " if len(named) > 1 else "") + named[-1]


def _name(name: str, times_asked_again: int) -> str:
    """A new name for each new asking: Strands keeps the refused answer under the old one."""
    return name if times_asked_again == 0 else f"{name}-again-{times_asked_again}"
