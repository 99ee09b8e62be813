"""Agents between turns: an agent whose turn ended cleanly is reset to new and serves the next.

Building a Strands agent registers every tool and plugin again, which on a
busy local server costs more than the rest of a turn's own work
(bench/throughput.py). A Strands agent is made to serve many invocations,
and what belongs to one conversation is what Strands' own session snapshot
holds (messages, state, conversation manager state, interrupt state), plus
the model's state and the system prompt. When a turn ends, all of that is
replaced by the snapshot the agent had when new and its metrics start
over, so an idle agent holds nothing of any thread; the next turn gives it
the model a new agent would get.

Only an agent whose run ended without questions comes back: a run waiting
for an answer keeps its agent (conversations.py), and a failed or abandoned
run's agent is dropped. An agent whose tools changed while it ran (a tool
that loads tools) is dropped too, so no thread ever inherits another's
tools.
"""

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from strands import Agent
from strands.models import Model
from strands.telemetry import EventLoopMetrics
from strands.types import Snapshot

if TYPE_CHECKING:
    # The names take_snapshot knows; Strands exports no public alias of them.
    from strands.types._snapshot import SnapshotField

logger = logging.getLogger(__name__)

# About the number of threads one local server answers at once; more idle
# agents than that would only hold memory.
MAX_IDLE = 16

# What one conversation leaves in an agent, in the names take_snapshot knows.
_CONVERSATION: "list[SnapshotField]" = ["model_state", "system_prompt"]


class IdleAgents:
    """Hands out agents for turns: a reset idle one when there is one, else a new one."""

    def __init__(self, build: Callable[[Model], Agent], max_idle: int = MAX_IDLE) -> None:
        self._build = build
        self._max_idle = max_idle
        self._idle: list[Agent] = []
        # Every agent comes from the same build, so one new agent's snapshot
        # and tools are what any agent is when new.
        self._new: tuple[Snapshot, frozenset[str]] | None = None

    def take(self, model: Model) -> Agent:
        """An agent as new, with this model."""
        if self._idle:
            agent = self._idle.pop()
            agent.model = model
            return agent
        agent = self._build(model)
        if self._new is None:
            blank = agent.take_snapshot(preset="session", include=_CONVERSATION)
            self._new = (blank, _tool_names(agent))
        return agent

    def give_back(self, agent: Agent) -> None:
        """Reset and keep an agent whose turn ended cleanly; drop it if it cannot be.

        Reset here, not when taken: an idle agent holds nothing of any thread.
        """
        if self._new is None or len(self._idle) >= self._max_idle:
            return
        blank, tools = self._new
        if _tool_names(agent) != tools:
            return
        try:
            agent.load_snapshot(blank)
        except Exception:
            # Strands refuses to reset an agent whose background tasks still
            # run: the next turn builds a new agent instead.
            logger.warning("could not reset an agent for another turn; dropping it", exc_info=True)
            return
        agent.event_loop_metrics = EventLoopMetrics()
        self._idle.append(agent)


def _tool_names(agent: Agent) -> frozenset[str]:
    registry = agent.tool_registry
    return frozenset(registry.registry) | frozenset(registry.dynamic_tools)
