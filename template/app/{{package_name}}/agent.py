"""Builds the Strands agent: model, tools, gate and prompt in one call."""

from typing import Any

from strands import Agent
from strands.models import Model
from strands.tools.executors import ConcurrentToolExecutor

from .gate import ApprovalGate, hand_consent_to_gate
from .model import check_model_settings
from .run_limits import RunLimits
from .run_storage import run_storage
from .settings import AGENT_NAME
from .tool_results import ToolResults
from .tools.registry import Registry
from .yours.prompt import SYSTEM_PROMPT


def build_agent(
    model: Model,
    registry: Registry,
    *,
    gate: ApprovalGate | None = None,
    run_limits: RunLimits | None = None,
    tool_executor: Any = None,
) -> Agent:
    """An agent for turns of Slack threads; the turn's messages are its prompt.

    It serves one turn at a time; between turns idle_agents.py resets it to
    what it was when built, so build it the same way every time.

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
        system_prompt=SYSTEM_PROMPT,
        plugins=[ToolResults(), run_limits or RunLimits(), gate or ApprovalGate(registry)],
        tool_executor=tool_executor or ConcurrentToolExecutor(),
        callback_handler=None,
    )


def check_at_startup(registry: Registry) -> None:
    """Fail when the server starts, not on the first Slack message, in one line that says why.

    An unknown model provider, a missing key, a run store without its bucket,
    or a tool that would prompt on standard input without the gate asking for
    it, is a configuration error: the process refuses to serve rather than
    fail in every thread, and a traceback would only bury the reason.
    """
    try:
        check_model_settings()
        run_storage()
        hand_consent_to_gate(registry)
    except ValueError as wrong:
        raise SystemExit(f"{AGENT_NAME} cannot start: {wrong}") from None
