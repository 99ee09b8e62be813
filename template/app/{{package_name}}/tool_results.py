"""Every tool call ends in a tool result the model can act on.

Strands can lose a result or hand the model noise: ConcurrentToolExecutor
swallows a tool's own CancelledError, so the result vanishes and the next
model request carries a toolUse nobody answered (Bedrock refuses it);
SequentialToolExecutor lets it escape and the whole run dies. A failing
tool's result is free text ("Error: ..."). This plugin turns both into an
error result with a structured error, `{"error": {"kind", "message"}}`,
the same shape the gate uses for a denial.
"""

import asyncio
import json
from collections.abc import AsyncIterator
from enum import StrEnum
from typing import Any

from strands.hooks import AfterToolCallEvent, BeforeToolCallEvent
from strands.plugins import Plugin, hook
from strands.types.tools import AgentTool


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


def refusal(kind: ErrorKind, message: str) -> str:
    """The text of a structured error result."""
    return json.dumps({"error": {"kind": kind.value, "message": message}})


def structured_error(result: dict) -> tuple[ErrorKind, str] | None:
    """The kind and message of one of this package's structured errors, or None."""
    error = _error_object(result)
    try:
        kind = ErrorKind(error["kind"]) if error else None
    except ValueError:
        return None  # a tool's own kind
    return (kind, str(error.get("message", ""))) if kind else None


def _error_object(result: dict) -> dict | None:
    """The `{"kind", ...}` object of any structured error, a tool's own kinds included."""
    content = result.get("content") or [{}]
    try:
        error = json.loads(content[0].get("text", ""))["error"]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return error if isinstance(error, dict) and "kind" in error else None


def error_result(tool_use: Any, kind: ErrorKind, message: str) -> dict:
    return {
        "toolUseId": tool_use["toolUseId"],
        "status": "error",
        "content": [{"text": refusal(kind, message)}],
    }


class ToolWrapper(AgentTool):
    """Stands in for a tool for one call and decides how it runs."""

    def __init__(self, tool: AgentTool) -> None:
        super().__init__()
        self.wrapped = tool

    @property
    def tool_name(self) -> str:
        return self.wrapped.tool_name

    @property
    def tool_spec(self) -> Any:
        return self.wrapped.tool_spec

    @property
    def tool_type(self) -> str:
        return self.wrapped.tool_type

    async def stream(self, tool_use: Any, invocation_state: Any, **kwargs: Any) -> AsyncIterator:
        async for event in self.wrapped.stream(tool_use, invocation_state, **kwargs):
            yield event


class _CancellationGuard(ToolWrapper):
    async def stream(self, tool_use: Any, invocation_state: Any, **kwargs: Any) -> AsyncIterator:
        try:
            async for event in self.wrapped.stream(tool_use, invocation_state, **kwargs):
                yield event
        except asyncio.CancelledError:
            if _cancelled_from_outside():
                raise  # the run itself is being cancelled: let it stop
            message = f"{self.tool_name} was cancelled before it finished."
            yield error_result(tool_use, ErrorKind.CANCELLED, message)


class ToolResults(Plugin):
    """Guards every call against a lost result and structures every failure."""

    name = "tool-results"

    @hook
    def guard_cancellation(self, event: BeforeToolCallEvent) -> None:
        if event.selected_tool is not None:
            event.selected_tool = _CancellationGuard(event.selected_tool)

    @hook
    def structure_failures(self, event: AfterToolCallEvent) -> None:
        result = event.result
        if result.get("status") != "error" or _error_object(result) is not None:
            return
        texts = [block["text"] for block in result.get("content", []) if "text" in block]
        message = " ".join(texts).removeprefix("Error: ") or "the tool failed"
        event.result = {**result, "content": [{"text": refusal(ErrorKind.TOOL_ERROR, message)}]}


def _cancelled_from_outside() -> bool:
    """True when someone cancelled the task running the tool, not the tool itself."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
