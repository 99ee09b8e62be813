"""A record of who answered what: one JSON log line per answer, and the same on the tool's span.

An approval in a Slack thread is a decision someone is accountable for, and
the thread can be edited or deleted; the agent's own log (CloudWatch Logs
on AgentCore) keeps who approved, denied or was refused, for which call,
with the input's fingerprint the gate checked. docs/approvals.md shows how
to find a decision there.
"""

import hashlib
import json
import logging

from opentelemetry import trace

logger = logging.getLogger(__name__)


def fingerprint(tool_input: object) -> str:
    """A digest of the whole input, clipped or not, to compare what ran with what was shown."""
    canonical = json.dumps(tool_input, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(canonical.encode()).hexdigest()


def outcome(answer: object, refused: str | None) -> str:
    """approved and denied are the buttons (True, False); typed text is an answer."""
    if refused is not None:
        return "refused"
    if answer is True:
        return "approved"
    if answer is False:
        return "denied"
    return "answered"


def record_answer(
    answer: object,
    *,
    refused: str | None,
    tool: str,
    fingerprint: str,
    answerer: str | None,
    allowed: frozenset[str] | None,
    session: str | None,
    run: str | None,
) -> dict[str, str]:
    """One audit line; returns the same fields as span attributes, set on the current span.

    A question a tool asks is answered inside the tool call's span. The
    gate's is answered before Strands opens one (a refused call gets none),
    so the gate sets them again on the span of the call it lets run.
    """
    fields: dict[str, object] = {
        "audit": outcome(answer, refused),
        "tool": tool,
        "inputFingerprint": fingerprint,
        "answeredBy": answerer,
        "mayAnswer": "anyone" if allowed is None else sorted(allowed),
        "sessionId": session,
        "runId": run,
    }
    if refused is not None:
        fields["refusal"] = refused
    by = answerer or "nobody verified"
    logger.info("%s: %s by %s", fields["audit"], tool, by, extra={"fields": fields})
    attributes = {
        f"welt.answer.{name}": value if isinstance(value, str) else json.dumps(value)
        for name, value in fields.items()
        if value is not None
    }
    trace.get_current_span().set_attributes(attributes)
    return attributes
