"""Who may answer a question, and what happens when someone else does.

In Slack, anyone who can see a thread can press its buttons, so without a
check anyone in the channel could approve a deploy on a thread someone
else started. A question can therefore name who may answer it: anyone (the
default), the person whose message started the run, the APPROVERS of the
settings, or named Slack users. The answerer is the verified user of the
request that carries the answer (platform/caller.py).

An answer from anyone else is not taken, and the question is asked again
under a new name: Welt replaces a question's buttons with a receipt once
anybody answers, so without a new question nobody could answer at all.
Strands runs an interrupted tool again from its first line on a resume, so
how many times a call's question was asked is kept in the agent's state,
which is stored with the run.
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..platform.caller import SlackUser
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


@dataclass(frozen=True)
class Answering:
    """What the request carrying an answer says about who sent it."""

    answerer: SlackUser | None
    on_agentcore: bool
    approvers: frozenset[str]
    session: str
    run: str | None = None  # the stored run an answer resumes


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
    asker: Asker, name: str, reason: dict[str, Any], answered_by: AnsweredBy, *, fingerprint: str
) -> tuple[Any, dict[str, str]]:
    """The answer to the question `name` from someone who may give it, and its audit attributes.

    Asks again until such an answer comes. Every answer, taken or refused,
    is one audit line (gate/audit.py); the fingerprint is the digest of the
    input the human saw.
    """
    state = asker.agent.state
    asked_again = f"asked_again:{asker.tool_use['toolUseId']}:{name}"
    times: int = state.get(asked_again) or 0
    answer = asker.interrupt(_name(name, times), reason=reason)
    answering: Answering | None = asker.invocation_state.get(ANSWERING)
    allowed = allowed_ids(answered_by, answering, state.get(STARTED_BY))
    refused = why_not(answered_by, answering, allowed)
    audited = record_answer(
        answer,
        refused=refused,
        tool=asker.tool_use["name"],
        fingerprint=fingerprint,
        answerer=answering.answerer.id if answering and answering.answerer else None,
        allowed=allowed,
        session=answering.session if answering else None,
        run=answering.run if answering else None,
    )
    if refused is None:
        state.delete(asked_again)
        return answer, audited
    state.set(asked_again, times + 1)
    again = {**reason, "message": f"_{refused}_\n\n{reason.get('message', '')}"}
    asker.interrupt(_name(name, times + 1), reason=again)  # raises: the run stops on it
    raise RuntimeError(f"the question {name} was asked again but did not stop the run")


def why_not(
    answered_by: AnsweredBy, answering: Answering | None, allowed: frozenset[str] | None
) -> str | None:
    """None when the answerer may answer; else the one line the thread is told.

    `allowed` is `allowed_ids(...)` of the same question: None means anyone.
    """
    if allowed is None:
        return None
    answerer = answering.answerer if answering else None
    who = _described(answered_by, allowed)
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
