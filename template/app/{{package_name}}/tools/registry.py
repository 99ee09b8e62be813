"""One row per tool: the tool, whether the gate asks, whether its files reach the thread.

The tool list, the files that go to Slack and the gate's policy are three
views of one table, so they cannot disagree: a tool added without a row
does not exist, and a row cannot forget to say whether a human approves.
A tool the agent gets from elsewhere (an MCP server, say) has no row and
gets the project's answer for unlisted tools.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import import_module
from importlib.util import find_spec
from typing import Any, Literal

from ..settings import GATE_UNLISTED_TOOLS

Decision = Literal["ask", "allow"]
ASK: Decision = "ask"  # a human approves each call in the thread before it runs
ALLOW: Decision = "allow"  # runs at once: harmless, or it asks the human itself

# What the gate does with a tool that has no row (a copier answer).
UNLISTED: Decision = ASK if GATE_UNLISTED_TOOLS else ALLOW


@dataclass(frozen=True)
class Row:
    """A tool, the gate's decision for it, and whether its files go to the thread."""

    tool: Any
    gate: Decision
    files_to_thread: bool = False

    def __post_init__(self) -> None:
        if self.gate not in (ASK, ALLOW):
            raise ValueError(f"{self.name}: gate must be ASK or ALLOW, not {self.gate!r}")

    @property
    def name(self) -> str:
        return tool_name(self.tool)


class Registry:
    """The rows of one agent, with the three views the rest of the package reads."""

    def __init__(self, rows: Iterable[Row], unlisted: Decision = UNLISTED) -> None:
        self.rows = tuple(rows)
        self.unlisted = unlisted
        names = [row.name for row in self.rows]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"tools with more than one row: {', '.join(repeated)}")
        self._by_name = dict(zip(names, self.rows, strict=True))

    @property
    def tools(self) -> list[Any]:
        return [row.tool for row in self.rows]

    @property
    def files_from(self) -> frozenset[str]:
        return frozenset(row.name for row in self.rows if row.files_to_thread)

    def decision_for(self, name: str) -> Decision:
        row = self._by_name.get(name)
        return row.gate if row else self.unlisted

    def with_rows(self, *rows: Row) -> "Registry":
        """This registry with more rows; a row replaces the one of the same name.

        For tests, which bring tools of their own, and for tools added at run time.
        """
        replaced = {row.name for row in rows}
        kept = [row for row in self.rows if row.name not in replaced]
        return Registry([*kept, *rows], self.unlisted)


def project_registry() -> Registry:
    """The registry that tools/__init__.py declares in TOOLS.

    Projects generated before 0.2.0 list bare tools in TOOLS, their files in
    FILES_FROM and their gate in policy.py. Those files are the user's, so
    an update cannot rewrite them: bare tools are read into rows from there
    until the user moves to rows (CHANGELOG.md, 0.2.0).
    """
    from .. import tools

    policy, unlisted = _policy_of_older_projects()
    files = set(getattr(tools, "FILES_FROM", ()))
    rows = [
        entry
        if isinstance(entry, Row)
        else Row(entry, policy.get(tool_name(entry), unlisted), tool_name(entry) in files)
        for entry in tools.TOOLS
    ]
    return Registry(rows, unlisted)


def _policy_of_older_projects() -> tuple[Mapping[str, Decision], Decision]:
    package = __package__.rsplit(".", 1)[0]
    if find_spec(f"{package}.policy") is None:
        return {}, UNLISTED
    policy = import_module(f"{package}.policy")
    return policy.POLICY, policy.UNLISTED


def tool_name(tool: Any) -> str:
    """The name of a decorated tool, an AgentTool, or a strands-tools module."""
    name = getattr(tool, "tool_name", None)
    if isinstance(name, str):
        return name
    spec = getattr(tool, "TOOL_SPEC", None)
    if isinstance(spec, dict):
        return spec.get("name", "")
    return getattr(tool, "__name__", "").rsplit(".", 1)[-1]
