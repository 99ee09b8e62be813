"""The approval gate: one steering handler that decides for every tool.

Tools this project wrote can ask for themselves with `interrupt()`; tools it
did not write (strands-tools, MCP servers) cannot be edited, so they are
gated from outside, here, before they run. The tool registry's rows say
which calls wait (yours/tools/__init__.py).

Strands' stock steering is not safe for approvals in a shared Slack thread:
it runs the tool when the handler raises, treats any truthy answer (even
"no") as approval, names its interrupts without the project prefix, and
lets a later hook change the input after the human approved it. The hook
below replaces the stock one and closes each of those gaps.
"""

import json
import logging
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from strands.hooks import BeforeToolCallEvent
from strands.plugins import hook
from strands.types.tools import AgentTool, ToolGenerator, ToolUse
from strands.vended_plugins.steering import (
    Interrupt,
    Proceed,
    SteeringHandler,
    ToolSteeringAction,
)
from welt_io_strands import interrupt_reason

from ..settings import AGENT_NAME
from .answerers import answer_to
from .audit import fingerprint
from .interrupt_names import gate_interrupt_name
from .registry import ALLOW, Registry
from .tool_errors import ErrorKind, error_result, refusal
from .tool_results import ToolWrapper

if TYPE_CHECKING:
    from strands import Agent

logger = logging.getLogger(__name__)

# Welt gives all questions of one stop 12,000 characters; several gated calls
# can stop together, so each shows at most this much of its arguments.
MAX_SHOWN_ARGUMENTS = 2_500


class ApprovalGate(SteeringHandler):
    """Asks a human before any call whose registry row says ASK."""

    name = "approval-gate"

    def __init__(self, registry: Registry) -> None:
        super().__init__()
        self.registry = registry

    async def steer_before_tool(
        self, *, agent: "Agent", tool_use: ToolUse, **kwargs: Any
    ) -> ToolSteeringAction:
        """Proceed, or Interrupt with the question a human sees; raising refuses the call."""
        if self.registry.decision_for(tool_use["name"]) == ALLOW:
            return Proceed(reason="allowed by the registry")
        return Interrupt(reason=describe_call(tool_use))

    # Strands types `hook` for a one-argument callback, not a method, and
    # reads the event type from the annotation at run time.
    @hook  # type: ignore[call-overload]
    async def provide_tool_steering_guidance(self, event: BeforeToolCallEvent) -> None:
        """Decide one call: only Proceed, or the approve button for the input shown, runs it.

        Named as Strands' stock hook, so it replaces that one (which fails open).
        """
        if event.cancel_tool or event.selected_tool is None:
            # Already refused (a run limit), or no such tool (Strands answers
            # "Unknown tool"): nothing a human could approve.
            return
        tool_use = event.tool_use
        tool_name = tool_use["name"]
        call_id = tool_use["toolUseId"]
        try:
            action = await self.steer_before_tool(agent=event.agent, tool_use=tool_use)
        except Exception as error:
            logger.warning(
                "approval gate failed on %s; refusing the call", tool_name, exc_info=True
            )
            event.cancel_tool = refusal(
                ErrorKind.GATE_FAILED,
                f"The approval gate failed ({error}), so {tool_name} did not run.",
            )
            return
        if isinstance(action, Proceed):
            return

        # Any other action asks. The fingerprint is kept in agent.state, which
        # is stored with the run: the resumed pass, maybe in another process,
        # checks the very input the human saw.
        shown_key = f"gate_shown:{call_id}"
        shown = event.agent.state.get(shown_key)
        if shown is None:
            shown = fingerprint(tool_use.get("input"))
            event.agent.state.set(shown_key, shown)
        answer, audited = answer_to(
            event,
            gate_interrupt_name(tool_name, call_id),
            approve_or_reject(action.reason),
            self.registry.answered_by(tool_name),
            fingerprint=shown,
            yes_or_no=True,  # only the approve button runs the call
        )
        event.agent.state.delete(shown_key)
        # Only the approve button answers True; typed text is always a string.
        if answer is not True:
            event.cancel_tool = refusal(ErrorKind.APPROVAL_DENIED, _denial(tool_name, answer))
        elif fingerprint(tool_use.get("input")) != shown:
            event.cancel_tool = refusal(ErrorKind.APPROVAL_INPUT_CHANGED, _changed(tool_name))
        else:
            event.selected_tool = _ApprovedCall(event.selected_tool, call_id, shown, audited)


class _ApprovedCall(ToolWrapper):
    """One approved call: runs once, for its own toolUseId, with the input shown.

    Checked when the tool runs, after every other hook has had its turn, so
    neither a rewritten input nor a replay for another call gets through.
    """

    def __init__(
        self, tool: AgentTool, call_id: str, approved_input: str, audited: dict[str, str]
    ) -> None:
        super().__init__(tool)
        # Public names: an AgentTool keeps private fields of its own.
        self.call_id = call_id
        self.approved_input = approved_input
        self.audited = audited
        self.used = False

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        same_call = tool_use.get("toolUseId") == self.call_id and not self.used
        if not same_call or fingerprint(tool_use.get("input")) != self.approved_input:
            yield error_result(tool_use, ErrorKind.APPROVAL_INPUT_CHANGED, _changed(self.tool_name))
            return
        self.used = True
        trace.get_current_span().set_attributes(self.audited)  # the tool call's own span
        async for event in self.wrapped.stream(tool_use, invocation_state, **kwargs):
            yield event


def describe_call(tool_use: ToolUse) -> str:
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


def approve_or_reject(message: str) -> dict[str, Any]:
    """The gate's question: Welt's approve and reject buttons, and a text field.

    The buttons answer True and False, values no typed reply can produce;
    typed text is a reason for saying no, and reaches the model with the
    denial.
    """
    return interrupt_reason(
        message,
        approve={"label": "Approve", "style": "primary"},
        reject={"label": "Reject", "style": "danger"},
        input={"label": "Or say why not"},
    )


def _denial(tool_name: str, answer: object) -> str:
    if isinstance(answer, str) and answer.strip():
        return f"The human did not approve {tool_name} and wrote: {answer.strip()}"
    return f"The human did not approve {tool_name}; it did not run."


def _changed(tool_name: str) -> str:
    return (
        f"{tool_name} did not run: its input changed after the human approved it, "
        "and an approval covers only the input shown."
    )
