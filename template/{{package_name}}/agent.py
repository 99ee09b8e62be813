"""Builds the Strands agent: model, tools, gate and prompt in one call."""

from collections.abc import Sequence
from typing import Any

from strands import Agent
from strands.models import Model

from .gate import ApprovalGate
from .settings import AGENT_NAME, SYSTEM_PROMPT
from .tools import TOOLS


def build_agent(
    model: Model, history: list[dict] | None = None, tools: Sequence[Any] = TOOLS
) -> Agent:
    """A fresh agent for one Slack thread, seeded with the thread so far.

    callback_handler=None keeps Strands from printing the stream to stdout;
    the wire is the only place the reply goes.
    """
    return Agent(
        name=AGENT_NAME,
        model=model,
        messages=history or [],
        tools=list(tools),
        system_prompt=SYSTEM_PROMPT,
        plugins=[ApprovalGate()],
        callback_handler=None,
    )
