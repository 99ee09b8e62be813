"""Builds the Strands agent: model, tools, gate and prompt in one call."""

from strands import Agent
from strands.models import Model
from strands.tools.executors import ConcurrentToolExecutor, SequentialToolExecutor

from .gate.approval_gate import ApprovalGate
from .gate.consent import hand_consent_to_gate
from .gate.registry import Registry
from .gate.run_limits import RunLimits, TurnCaps
from .gate.tool_results import ToolResults
from .settings import AGENT_NAME


def build_agent(
    model: Model,
    registry: Registry,
    *,
    system_prompt: str,
    caps: TurnCaps,
    gate: ApprovalGate | None = None,
    tool_executor: ConcurrentToolExecutor | SequentialToolExecutor | None = None,
) -> Agent:
    """An agent for turns of Slack threads; the turn's messages are its prompt.

    It serves one turn at a time; between turns turns/idle_agents.py resets it
    to what it was when built, so build it the same way every time.

    Tools run concurrently (Strands' default), so every gated call of one
    model turn asks in the same stop and Welt shows the questions together;
    ToolResults keeps the executor from losing a cancelled tool's result;
    RunLimits comes before the gate, so a call over a cap is never asked about.
    callback_handler=None keeps Strands from printing the stream to stdout:
    the wire is the only place the reply goes.
    """
    hand_consent_to_gate(registry)
    return Agent(
        name=AGENT_NAME,
        model=model,
        tools=registry.tools,
        system_prompt=system_prompt,
        plugins=[ToolResults(), RunLimits(caps), gate or ApprovalGate(registry)],
        tool_executor=tool_executor or ConcurrentToolExecutor(),
        callback_handler=None,
    )
