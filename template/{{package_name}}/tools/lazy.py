"""Tools from strands-agents-tools, imported when the first agent is built.

Every Slack thread is a new AgentCore microVM, so start-up is paid once per
conversation. Some strands-tools modules import heavy libraries at import
time (rich and pygments cost about a tenth of a second), so such a tool is
named with LazyTool and imported on first use instead of at start-up.
"""

import importlib
from collections.abc import AsyncIterator
from typing import Any

from strands.tools.tools import PythonAgentTool
from strands.types.tools import AgentTool


class LazyTool(AgentTool):
    """A module tool from strands-tools, such as `LazyTool("http_request")`."""

    def __init__(self, name: str, module: str = "") -> None:
        super().__init__()
        self._name = name
        self._module = module or f"strands_tools.{name}"
        self._tool: AgentTool | None = None

    def _loaded(self) -> AgentTool:
        if self._tool is None:
            module = importlib.import_module(self._module)
            found = getattr(module, self._name)
            if isinstance(found, AgentTool):
                self._tool = found
            else:
                self._tool = PythonAgentTool(self._name, module.TOOL_SPEC, found)
        return self._tool

    @property
    def tool_name(self) -> str:
        return self._name

    @property
    def tool_spec(self) -> Any:
        return self._loaded().tool_spec

    @property
    def tool_type(self) -> str:
        return self._loaded().tool_type

    async def stream(self, tool_use: Any, invocation_state: Any, **kwargs: Any) -> AsyncIterator:
        async for event in self._loaded().stream(tool_use, invocation_state, **kwargs):
            yield event
