"""The structured errors a tool result can carry, named once: `{"error": {"kind", "message"}}`.

The model acts on a kind it can tell apart ("approval-denied" is not worth
retrying, "tool-error" may be); the wire reads the same kinds to decide what
the human hears of too. One vocabulary, so the gate, the run limits and the
tool-result plugin cannot drift into three spellings of one failure.
"""

import json
from enum import StrEnum
from typing import Any

from strands.types.tools import ToolResult, ToolUse


class ErrorKind(StrEnum):
    """Every kind of structured error a tool result can carry, named once."""

    APPROVAL_DENIED = "approval-denied"
    APPROVAL_INPUT_CHANGED = "approval-input-changed"
    GATE_FAILED = "gate-failed"
    TOOL_ERROR = "tool-error"
    CANCELLED = "cancelled"
    RUN_LIMIT_EXCEEDED = "run-limit-exceeded"

    @property
    def tell_the_human(self) -> bool:
        """Whether the thread hears of it too, not only the model.

        The human approved (or meant to approve) the call, or is waiting for
        a reply the turn will not give, so it must not hide behind the
        model's paraphrase.
        """
        return self in (
            ErrorKind.APPROVAL_INPUT_CHANGED,
            ErrorKind.GATE_FAILED,
            ErrorKind.RUN_LIMIT_EXCEEDED,
        )


class DeniedByHuman(Exception):
    """Raised by a tool a human said no to from inside it (Cancel): the model sees approval-denied.

    Not a failure worth retrying, so not a tool-error: the message says who
    declined what, in one line, and is all the model sees of it.
    """


def refusal(kind: ErrorKind, message: str) -> str:
    """The text of a structured error result."""
    return json.dumps({"error": {"kind": kind.value, "message": message}})


def structured_error(result: ToolResult) -> tuple[ErrorKind, str] | None:
    """The kind and message of one of this package's structured errors, or None."""
    error = error_object(result)
    if error is None:
        return None
    try:
        kind = ErrorKind(error["kind"])
    except ValueError:
        return None  # a tool's own kind
    return kind, str(error.get("message", ""))


def error_object(result: ToolResult) -> dict[str, Any] | None:
    """The `{"kind", ...}` object of any structured error, a tool's own kinds included."""
    content = result.get("content") or [{}]
    try:
        error = json.loads(content[0].get("text", ""))["error"]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return error if isinstance(error, dict) and "kind" in error else None


def error_result(tool_use: ToolUse, kind: ErrorKind, message: str) -> ToolResult:
    return {
        "toolUseId": tool_use["toolUseId"],
        "status": "error",
        "content": [{"text": refusal(kind, message)}],
    }
