"""Work a tool does before it asks, kept per call: Strands runs an interrupted tool again.

Shared by the tools of yours (through api.py) and rehearsal's draft
(model/rehearsal_tools.py).
"""

from collections.abc import Callable
from typing import Any, TypeVar

from strands import ToolContext

T = TypeVar("T")


class CallMemo:
    """Work a tool does before `interrupt()`, done once per call however often the tool runs.

    Strands runs an interrupted tool again from its first line when the run
    resumes. Work before the interrupt (a draft, a timestamp, a model call)
    would be done again and differ from what the human approved, so it is
    kept in the agent's state under the call's toolUseId, the same on both
    passes, and stored with the run while it waits. One key per call: calls
    of one model turn run concurrently, and a shared dict would lose one.
    """

    def __init__(self, tool_context: ToolContext, name: str) -> None:
        self._state = tool_context.agent.state
        self._key = f"{name}:{tool_context.tool_use['toolUseId']}"

    def get_or_make(self, make: Callable[[], T]) -> T:
        """The value kept for this call, made (and kept) on the first pass."""
        kept: Any = self._state.get(self._key)
        if kept is None:
            kept = make()  # kept as JSON with the run: make it a dict, list, str or number
            self._state.set(self._key, kept)
        return kept

    def forget(self) -> None:
        """Drop the value once the human has answered: the run no longer needs it."""
        self._state.delete(self._key)
