"""A record of who answered what: one JSON log line per decision, and the same on the tool's span.

An approval in a Slack thread is a decision someone is accountable for, and
the thread can be edited or deleted; the agent's own log (CloudWatch Logs
on AgentCore) keeps who approved, denied or was refused, for which call,
with the input's fingerprint the gate checked, and every request whose
answers were turned away before any question saw them. A line names as
answerer only someone Welt proves gave that answer; otherwise it says who
sent the request and that the answerer is unknown. docs/approvals.md shows
how to find a decision there.
"""

import hashlib
import json
import logging

from opentelemetry import trace

from ..platform.logs import SHOWN_OF_A_SESSION
from ..wire.payload import shown_text

logger = logging.getLogger(__name__)

# How many of a refused request's interrupt ids its door line names; the
# line counts them all.
QUESTIONS_SHOWN = 25


def fingerprint(tool_input: object) -> str:
    """A digest of the whole input, clipped or not, to compare what ran with what was shown."""
    canonical = json.dumps(tool_input, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(canonical.encode()).hexdigest()


def outcome(answer: object, refused: str | None, yes_or_no: bool = False) -> str:
    """approved and denied are the buttons (True, False); typed text is an answer.

    For a yes-or-no question (the gate's), anything but the approve button denies.
    """
    if refused is not None:
        return "refused"
    if answer is True:
        return "approved"
    if answer is False or yes_or_no:
        return "denied"
    return "answered"


def record_answer(
    answer: object,
    *,
    refused: str | None,
    tool: str,
    fingerprint: str,
    answerer: str | None,
    sender: str | None,
    answers: int,
    allowed: frozenset[str] | None,
    session: str | None,
    run: str | None,
    yes_or_no: bool = False,
) -> dict[str, str]:
    """One audit line; returns the same fields as span attributes, set on the current span.

    `answerer` is who provably gave the answer, `sender` the verified user
    of the request that carried it, with `answers` in all. A question a
    tool asks is answered inside the tool call's span. The gate's is
    answered before Strands opens one (a refused call gets none), so the
    gate sets them again on the span of the call it lets run.
    """
    fields: dict[str, object] = {
        "audit": outcome(answer, refused, yes_or_no),
        "at": "question",
        "tool": tool,
        "inputFingerprint": fingerprint,
        "answeredBy": answerer,
        "sentBy": sender,
        "answersSentTogether": answers,
        "mayAnswer": "anyone" if allowed is None else sorted(allowed),
        "sessionId": session,
        "runId": run,
    }
    if refused is not None:
        fields["refusal"] = refused
    logger.info(
        "%s: %s by %s",
        fields["audit"],
        tool,
        _who(answerer, sender, answers),
        extra={"fields": fields},
    )
    attributes = {
        f"welt.answer.{name}": value if isinstance(value, str) else json.dumps(value)
        for name, value in fields.items()
        if value is not None
    }
    trace.get_current_span().set_attributes(attributes)
    return attributes


def record_turned_away(
    *,
    replayed: bool,
    reason: str,
    sender: str | None,
    answered: list[str] | None,
    session: str | None,
    run: str | None,
) -> None:
    """One audit line for answers that no question saw: refused at the door, or a replay.

    A payload off the schema, a null, a value the question did not offer,
    an unknown id, answers to a run that is gone or was already resumed, a
    store or a key that cannot be had: each is someone trying to decide,
    and the line keeps who sent it even though nothing ran. `answered` is
    None for a request refused before it was read (too large, too deep),
    which may have carried answers. What the client sent (ids, the session)
    is shown as far as a line should repeat it (`shown_text`).
    """
    fields: dict[str, object] = {
        "audit": "replayed" if replayed else "refused",
        "at": "door",
        "answeredBy": None,
        "sentBy": sender,
        "answersSentTogether": None if answered is None else len(answered),
        "questions": None
        if answered is None
        else [shown_text(each) for each in answered[:QUESTIONS_SHOWN]],
        "sessionId": None if session is None else shown_text(session, SHOWN_OF_A_SESSION),
        "runId": run,
        "refusal": reason,
    }
    logger.info(
        "%s at the door: %s sent by %s",
        fields["audit"],
        "a request, unread," if answered is None else "answers",
        sender or "nobody verified",
        extra={"fields": fields},
    )


def record_over_budget(
    *, budget: str, setting: str, used: str, resets: str, sender: str | None, session: str
) -> None:
    """One audit line for a turn a budget refused (accounting/budgets.py): whose, which, until."""
    fields: dict[str, object] = {
        "audit": "over-budget",
        "at": "turn",
        "budget": budget,
        "setting": setting,
        "used": used,
        "resets": resets,
        "sentBy": sender,
        "sessionId": session,
    }
    logger.info(
        "over budget: %s refused a turn sent by %s",
        setting,
        sender or "nobody verified",
        extra={"fields": fields},
    )


def _who(answerer: str | None, sender: str | None, answers: int) -> str:
    if answerer is not None:
        return answerer
    if sender is not None and answers > 1:
        return f"someone Welt did not name ({answers} answers sent together by {sender})"
    return "nobody verified"
