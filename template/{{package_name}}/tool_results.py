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
from typing import Any

from strands.hooks import AfterToolCallEvent, BeforeToolCallEvent
from strands.plugins import Plugin, hook
from strands.types.tools import AgentTool


def refusal(kind: str, message: str) -> str:
    """The text of a structured error: approval-denied, approval-input-changed,
    gate-failed, tool-error or cancelled."""
    return json.dumps({"error": {"kind": kind, "message": message}})


def structured_error(result: dict) -> dict | None:
    """The `{"kind", "message"}` of a structured error result, or None for any other."""
    content = result.get("content") or [{}]
    try:
        error = json.loads(content[0].get("text", ""))["error"]
        return error if isinstance(error, dict) and "kind" in error else None
    except (ValueError, KeyError, TypeError):
        return None


def error_result(tool_use: Any, kind: str, message: str) -> dict:
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
            yield error_result(tool_use, "cancelled", message)


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
        if result.get("status") != "error" or structured_error(result) is not None:
            return
        texts = [block["text"] for block in result.get("content", []) if "text" in block]
        message = " ".join(texts).removeprefix("Error: ") or "the tool failed"
        event.result = {**result, "content": [{"text": refusal("tool-error", message)}]}


def _cancelled_from_outside() -> bool:
    """True when someone cancelled the task running the tool (Python 3.11+ can tell).

    On 3.10 the two cases look alike and the result is kept; a run cancelled
    from outside still stops at its next event, when its consumer is gone.
    """
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    return bool(cancelling and cancelling())
