"""The approval gate: one steering handler that decides for every tool.

Tools this project wrote can ask for themselves with `interrupt()`; tools it
did not write (strands-tools, MCP servers) cannot be edited, so they are
gated from outside, here, before they run. policy.py says which calls wait.

Strands' stock steering is not safe for approvals in a shared Slack thread:
it runs the tool when the handler raises, treats any truthy answer (even
"no") as approval, and names its interrupts without the project prefix. The
hook below replaces the stock one to close those gaps.
"""

import json
import logging
from typing import Any

from strands.hooks import BeforeToolCallEvent
from strands.plugins import hook
from strands.vended_plugins.steering import (
    Guide,
    Interrupt,
    Proceed,
    SteeringHandler,
    ToolSteeringAction,
)

from .interrupt_names import gate_interrupt_name
from .policy import ALLOW, decision_for
from .settings import AGENT_NAME

logger = logging.getLogger(__name__)

# Welt gives all questions of one stop 12,000 characters; several gated calls
# can stop together, so each shows at most this much of its arguments.
MAX_SHOWN_ARGUMENTS = 2_500


class ApprovalGate(SteeringHandler):
    """Asks a human before any call that policy.py marks ASK."""

    name = "approval-gate"

    async def steer_before_tool(
        self, *, agent: Any, tool_use: dict, **kwargs: Any
    ) -> ToolSteeringAction:
        if decision_for(tool_use["name"]) == ALLOW:
            return Proceed(reason="allowed by policy")
        return Interrupt(reason=describe_call(tool_use))

    @hook
    async def provide_tool_steering_guidance(self, event: BeforeToolCallEvent) -> None:
        """Decide one call; anything but a clear approval keeps it from running."""
        tool_use = event.tool_use
        tool_name = tool_use["name"]
        try:
            action = await self.steer_before_tool(agent=event.agent, tool_use=tool_use)
        except Exception as error:
            logger.warning(
                "approval gate failed on %s; refusing the call", tool_name, exc_info=True
            )
            event.cancel_tool = refusal(
                "gate-failed", f"The approval gate failed ({error}), so {tool_name} did not run."
            )
            return
        if isinstance(action, Proceed):
            return
        if isinstance(action, Guide):
            event.cancel_tool = action.reason
            return
        answer = event.interrupt(
            gate_interrupt_name(tool_name, tool_use["toolUseId"]), reason=action.reason
        )
        if answer is not True:
            event.cancel_tool = refusal("approval-denied", _denial_message(tool_name, answer))


def describe_call(tool_use: dict) -> str:
    """The question a human sees: which tool, with which arguments."""
    arguments = json.dumps(tool_use.get("input"), indent=2, ensure_ascii=False, default=str)
    note = ""
    if len(arguments) > MAX_SHOWN_ARGUMENTS:
        shown = f"{MAX_SHOWN_ARGUMENTS:,} of {len(arguments):,}"
        note = f"\n_(arguments clipped: showing {shown} characters)_"
        arguments = arguments[:MAX_SHOWN_ARGUMENTS]
    return (
        f"{AGENT_NAME} wants to run *{tool_use['name']}* with:\n"
        f"```\n{arguments}\n```{note}\n"
        "Approve runs it once, with exactly these arguments."
    )


def refusal(kind: str, message: str) -> str:
    """A tool result the model can act on, not a stack trace."""
    return json.dumps({"error": {"kind": kind, "message": message}})


def _denial_message(tool_name: str, answer: Any) -> str:
    if isinstance(answer, str) and answer.strip():
        return f"The human did not approve {tool_name} and wrote: {answer.strip()}"
    return f"The human did not approve {tool_name}; it did not run."
