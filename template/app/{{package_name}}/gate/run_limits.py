"""Caps on one turn's model calls and tool calls, so a looping model cannot run up a bill.

A model that keeps calling tools never ends its turn by itself: each cycle
is another paid model call, and the Slack thread waits. A turn is one
message from the thread, with every question asked and answered inside it.

The model-call cap is Strands' own: every request runs with
`limits={"turns": ...}` (`TurnCaps.left_for`), and Strands stops the loop at a
turn boundary, after the tools the last model call asked for have run, with
the stop reason `limit_turns` (`TurnCaps.notice` tells the thread). Strands'
limits last one invocation, but a turn that stops on a question resumes in a
later request, maybe in another process; so the turn's model calls are
counted in agent.state, which is stored with the waiting run, and each
request gets what is left of the cap.

The tool-call cap is ours, because Strands has none: the `RunLimits` plugin
refuses the call over the cap before it runs, with a structured
`run-limit-exceeded` error the thread is told of too, and stops the loop
before the model is asked again. A tool call is counted once by its
toolUseId, because an interrupted tool runs again from its first line when
it resumes.
"""

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from strands import Agent
from strands.hooks import BeforeModelCallEvent, BeforeToolCallEvent
from strands.plugins import Plugin, hook

from .tool_errors import ErrorKind, refusal

if TYPE_CHECKING:
    from strands.types.agent import Limits

STATE_KEY = "run_limits"

# Strands 1.62 stops the loop after the current tools with
# agent.cancel(after_current_tools=True); 1.54 to 1.61 read
# request_state["stop_event_loop"] instead, which 1.62 deprecates.
_CANCEL_AFTER_TOOLS = "after_current_tools" in inspect.signature(Agent.cancel).parameters


@dataclass(frozen=True)
class TurnCaps:
    """The caps of one turn, from the settings: model calls, and tool calls."""

    model_calls: int
    tool_calls: int

    def left_for(self, agent: Agent) -> "Limits":
        """Strands' limits for this request: what is left of the turn's model-call cap.

        A count in agent.state means the request resumes a run of this turn
        that stopped on a question: a new turn starts on a fresh agent or
        after `new_turn`, with no count. Strands counts the resumed run's
        first cycle, which re-runs the interrupted tools without calling the
        model, as a turn of its own, so a resumed run gets one turn more
        than the model calls left.
        """
        counts = agent.state.get(STATE_KEY)
        if counts is None:
            return {"turns": max(1, self.model_calls)}
        return {"turns": max(1, self.model_calls - counts["model_calls"] + 1)}

    def notice(self, stop_reason: str | None) -> str | None:
        """What the thread is told when Strands stopped the turn at one of its caps."""
        if stop_reason == "limit_total_tokens":  # the share of a budget it held (accounting/)
            return (
                "This turn stopped: it used the tokens it could hold of its budget "
                "(MAX_TOKENS_PER_TURN, or what was left). Send a message to go on."
            )
        if stop_reason != "limit_turns":
            return None
        return (
            f"This turn stopped: it reached its limit of {self.model_calls} model calls "
            "(MAX_MODEL_CALLS_PER_TURN). Send a message to go on."
        )


def new_turn(agent: Agent) -> None:
    """Start counting afresh: a new message from the thread is a new turn."""
    agent.state.delete(STATE_KEY)


class RunLimits(Plugin):
    """Counts the turn's model calls for `TurnCaps.left_for`; refuses the tool call over the cap."""

    name = "run-limits"

    def __init__(self, caps: TurnCaps) -> None:
        super().__init__()
        self.caps = caps

    # Strands types `hook` for a one-argument callback, not a method, and
    # reads the event type from the annotation at run time.
    @hook  # type: ignore[call-overload]
    def count_model_call(self, event: BeforeModelCallEvent) -> None:
        counts = _counts(event.agent)
        # A retried model call is one turn to Strands: count a cycle's calls once.
        cycle = str(event.invocation_state.get("event_loop_cycle_id", ""))
        if cycle and cycle == counts.get("cycle"):
            return
        counts["model_calls"] += 1
        counts["cycle"] = cycle
        event.agent.state.set(STATE_KEY, counts)

    @hook  # type: ignore[call-overload]  # a method: see above
    def check_tool_call(self, event: BeforeToolCallEvent) -> None:
        counts = _counts(event.agent)
        call_id = event.tool_use["toolUseId"]
        if call_id in counts["tool_calls"]:
            return  # a resumed call, counted when it first ran
        if len(counts["tool_calls"]) < self.caps.tool_calls:
            counts["tool_calls"].append(call_id)
            event.agent.state.set(STATE_KEY, counts)
            return
        event.cancel_tool = refusal(
            ErrorKind.RUN_LIMIT_EXCEEDED,
            f"This turn stopped: it reached its limit of {self.caps.tool_calls} tool calls "
            "(MAX_TOOL_CALLS_PER_TURN). Send a message to go on.",
        )
        if _CANCEL_AFTER_TOOLS:
            event.agent.cancel(after_current_tools=True)
        else:
            event.invocation_state["request_state"]["stop_event_loop"] = True


def _counts(agent: Agent) -> dict[str, Any]:
    return agent.state.get(STATE_KEY) or {"model_calls": 0, "tool_calls": []}
