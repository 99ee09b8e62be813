"""Tools from strands-agents-tools, imported when they are first called.

Every Slack thread is a new AgentCore microVM, so start-up and the first
reply are paid once per conversation. Some strands-tools modules import
heavy libraries (rich and pygments cost about 0.06 s), and Strands asks
every tool for its spec when the first agent is built. A
LazyTool answers that from the module's source, where TOOL_SPEC is a plain
literal, and imports the module only when the model calls the tool.
"""

import ast
import importlib
import re
from importlib.util import find_spec
from pathlib import Path
from typing import Any, cast

from strands.tools.tools import PythonAgentTool
from strands.types.tools import AgentTool, ToolGenerator, ToolSpec, ToolUse

from .left_out import explained


class LazyTool(AgentTool):
    """A module tool from strands-tools, such as `LazyTool("http_request")`."""

    def __init__(self, name: str, module: str = "") -> None:
        super().__init__()
        self._name = name
        self._module = module or f"strands_tools.{name}"
        self._tool: AgentTool | None = None
        self._spec: ToolSpec | None = None

    def _loaded(self) -> AgentTool:
        if self._tool is None:
            try:
                module = importlib.import_module(self._module)
            except ModuleNotFoundError as missing:
                raise explained(missing, self._module) from missing
            found = getattr(module, self._name)
            if isinstance(found, AgentTool):
                self._tool = found
            else:
                self._tool = PythonAgentTool(self._name, module.TOOL_SPEC, found)
        return self._tool

    def _unloaded_spec(self) -> ToolSpec | None:
        if self._tool is None and self._spec is None:
            self._spec = literal_tool_spec(self._module)
        return self._spec if self._tool is None else None

    @property
    def tool_name(self) -> str:
        return self._name

    @property
    def tool_spec(self) -> ToolSpec:
        return self._unloaded_spec() or self._loaded().tool_spec

    @property
    def tool_type(self) -> str:
        # A module with a literal TOOL_SPEC is a module tool, which Strands calls "python".
        return "python" if self._unloaded_spec() else self._loaded().tool_type

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        async for event in self._loaded().stream(tool_use, invocation_state, **kwargs):
            yield event


def literal_tool_spec(module: str) -> ToolSpec | None:
    """The module's TOOL_SPEC, read from its source without importing it; None if not a literal.

    Only the assignment is parsed (from `TOOL_SPEC = {` to the first line
    that starts with `}`): parsing the whole module would cost a third of
    what importing it does.
    """
    found = find_spec(module)
    if found is None or not found.origin:
        return None
    assignment = _TOOL_SPEC.search(Path(found.origin).read_text())
    try:
        spec = ast.literal_eval(assignment.group(1)) if assignment else None
    except (ValueError, SyntaxError):
        return None
    # The module's own literal, in the shape Strands reads from TOOL_SPEC.
    return cast(ToolSpec, spec) if isinstance(spec, dict) else None


_TOOL_SPEC = re.compile(r"^TOOL_SPEC\s*=\s*(\{.*?^\})", re.MULTILINE | re.DOTALL)
