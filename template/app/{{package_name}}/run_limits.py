"""Caps on one turn's model calls and tool calls, so a looping model cannot run up a bill.

A model that keeps calling tools never ends its turn by itself: each cycle
is another paid model call, and the Slack thread waits. The cap is checked
before a tool runs, never inside one, so no tool is left half done: the call
over the cap is refused with a structured `run-limit-exceeded` error (the
thread is told which limit), and the loop stops before the model is asked
again. The counts live in agent.state, which is stored with a run waiting
for an answer: questions cost nothing, and a resumed run counts on from
where it stopped. A tool call is counted once by its toolUseId, because an
interrupted tool runs again from its first line when it resumes.
"""

import inspect
from typing import Any

from strands import Agent
from strands.hooks import BeforeModelCallEvent, BeforeToolCallEvent
from strands.plugins import Plugin, hook

from .settings import MAX_MODEL_CALLS_PER_TURN, MAX_TOOL_CALLS_PER_TURN
from .tool_results import ErrorKind, refusal

STATE_KEY = "run_limits"

# Newer Strands stops the loop with agent.cancel(after_current_tools=True);
# older releases read request_state["stop_event_loop"], which newer ones deprecate.
_CANCEL_AFTER_TOOLS = "after_current_tools" in inspect.signature(Agent.cancel).parameters


def new_turn(agent: Agent) -> None:
    """Start counting afresh: a new message from the thread is a new turn."""
    agent.state.delete(STATE_KEY)


class RunLimits(Plugin):
    """Refuses the tool call that would pass a cap, and ends the turn there."""

    name = "run-limits"

    def __init__(
        self,
        max_model_calls: int = MAX_MODEL_CALLS_PER_TURN,
        max_tool_calls: int = MAX_TOOL_CALLS_PER_TURN,
    ) -> None:
        super().__init__()
        self.max_model_calls = max_model_calls
        self.max_tool_calls = max_tool_calls

    @hook
    def count_model_call(self, event: BeforeModelCallEvent) -> None:
        counts = _counts(event.agent)
        counts["model_calls"] += 1
        event.agent.state.set(STATE_KEY, counts)

    @hook
    def check_tool_call(self, event: BeforeToolCallEvent) -> None:
        counts = _counts(event.agent)
        call_id = event.tool_use["toolUseId"]
        if call_id in counts["tool_calls"]:
            return  # a resumed call, counted when it first ran
        limit = self._limit_reached(counts)
        if limit is None:
            counts["tool_calls"].append(call_id)
            event.agent.state.set(STATE_KEY, counts)
            return
        event.cancel_tool = refusal(ErrorKind.RUN_LIMIT_EXCEEDED, limit)
        _stop_after_these_tools(event)

    def _limit_reached(self, counts: dict) -> str | None:
        if len(counts["tool_calls"]) >= self.max_tool_calls:
            return (
                f"This turn stopped: it reached its limit of {self.max_tool_calls} tool calls "
                "(MAX_TOOL_CALLS_PER_TURN). Send a message to go on."
            )
        if counts["model_calls"] >= self.max_model_calls:
            # The result of this call would need one more model call.
            return (
                f"This turn stopped: it reached its limit of {self.max_model_calls} model calls "
                "(MAX_MODEL_CALLS_PER_TURN). Send a message to go on."
            )
        return None


def _counts(agent: Agent) -> dict[str, Any]:
    return agent.state.get(STATE_KEY) or {"model_calls": 0, "tool_calls": []}


def _stop_after_these_tools(event: BeforeToolCallEvent) -> None:
    if _CANCEL_AFTER_TOOLS:
        event.agent.cancel(after_current_tools=True)
    else:
        event.invocation_state["request_state"]["stop_event_loop"] = True
