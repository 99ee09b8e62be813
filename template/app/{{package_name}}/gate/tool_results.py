"""Every tool call ends in a tool result the model can act on.

Strands can lose a result or hand the model noise: ConcurrentToolExecutor
swallows a tool's own CancelledError, so the result vanishes and the next
model request carries a toolUse nobody answered (Bedrock refuses it);
SequentialToolExecutor lets it escape and the whole run dies. A failing
tool's result is free text ("Error: ..."). This plugin turns both into an
error result with a structured error (tool_errors.py), the same shape the
gate uses for a denial; a tool's own denial (DeniedByHuman: a Cancel
pressed inside it) reads as the gate's denial does.
"""

import asyncio
from typing import Any

from strands.hooks import AfterToolCallEvent, BeforeToolCallEvent
from strands.plugins import Plugin, hook
from strands.types.tools import AgentTool, ToolGenerator, ToolSpec, ToolUse

from .tool_errors import DeniedByHuman, ErrorKind, error_object, error_result, refusal


class ToolWrapper(AgentTool):
    """Stands in for a tool for one call and decides how it runs."""

    def __init__(self, tool: AgentTool) -> None:
        super().__init__()
        self.wrapped = tool

    @property
    def tool_name(self) -> str:
        return self.wrapped.tool_name

    @property
    def tool_spec(self) -> ToolSpec:
        return self.wrapped.tool_spec

    @property
    def tool_type(self) -> str:
        return self.wrapped.tool_type

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        async for event in self.wrapped.stream(tool_use, invocation_state, **kwargs):
            yield event


class _CancellationGuard(ToolWrapper):
    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
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

    # Strands types `hook` for a one-argument callback, not a method, and
    # reads the event type from the annotation at run time.
    @hook  # type: ignore[call-overload]
    def guard_cancellation(self, event: BeforeToolCallEvent) -> None:
        if event.selected_tool is not None:
            event.selected_tool = _CancellationGuard(event.selected_tool)

    @hook  # type: ignore[call-overload]  # a method: see above
    def structure_failures(self, event: AfterToolCallEvent) -> None:
        result = event.result
        if result.get("status") != "error" or error_object(result) is not None:
            return
        if isinstance(event.exception, DeniedByHuman):
            denied = refusal(ErrorKind.APPROVAL_DENIED, str(event.exception))
            event.result = {**result, "content": [{"text": denied}]}
            return
        texts = [block["text"] for block in result.get("content", []) if "text" in block]
        message = " ".join(texts).removeprefix("Error: ") or "the tool failed"
        event.result = {**result, "content": [{"text": refusal(ErrorKind.TOOL_ERROR, message)}]}


def _cancelled_from_outside() -> bool:
    """True when someone cancelled the task running the tool, not the tool itself."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
