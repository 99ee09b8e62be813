"""One row per tool: the tool, whether the gate asks, whether its files reach the thread.

The tool list, the files that go to Slack and the gate's policy are three
views of one table, so they cannot disagree: a tool added without a row
does not exist, and a row cannot forget to say whether a human approves.
The table is TOOLS, in yours/tools/__init__.py, which factory.py reads. An
MCP server's tools get rows when the server starts (ASK unless
yours/mcp_servers.py allows them); a tool that still has no row gets the
project's answer for unlisted tools.
"""

import asyncio
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ..settings import GATE_UNLISTED_TOOLS, ConfigurationError
from .answerers import ANYONE, AnsweredBy

Decision = Literal["ask", "allow"]
ASK: Decision = "ask"  # a human approves each call in the thread before it runs
ALLOW: Decision = "allow"  # runs at once: harmless, or it asks the human itself

# What the gate does with a tool that has no row (a copier answer).
UNLISTED: Decision = ASK if GATE_UNLISTED_TOOLS else ALLOW


class BareTools(ConfigurationError):
    """TOOLS lists a tool without its row, so nothing says whether a human approves it."""


@dataclass(frozen=True)
class Row:
    """A tool, the gate's decision for it, whether its files go to the thread, who approves it.

    answered_by says who may answer the gate's question for an ASK row
    (gate/answerers.py): anyone who sees the thread, unless it says otherwise.
    """

    tool: Any
    gate: Decision
    files_to_thread: bool = False
    answered_by: AnsweredBy = ANYONE

    def __post_init__(self) -> None:
        if self.gate not in (ASK, ALLOW):
            raise ConfigurationError(f"{self.name}: gate must be ASK or ALLOW, not {self.gate!r}")
        if not isinstance(self.answered_by, AnsweredBy):
            raise ConfigurationError(
                f"{self.name}: answered_by must be ANYONE, STARTER, APPROVERS or users(...), "
                f"not {self.answered_by!r}"
            )

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
            raise ConfigurationError(f"tools with more than one row: {', '.join(repeated)}")
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

    def answered_by(self, name: str) -> AnsweredBy:
        row = self._by_name.get(name)
        return row.answered_by if row else ANYONE

    @classmethod
    def of(cls, tools: Sequence[object]) -> "Registry":
        """The registry a TOOLS list declares; a tool listed without its row is refused."""
        bare = [tool_name(entry) for entry in tools if not isinstance(entry, Row)]
        if bare:
            raise BareTools(
                f"TOOLS lists tools without a row: {', '.join(bare)}. Give each one "
                "Row(tool, ASK) or Row(tool, ALLOW) in yours/tools/__init__.py."
            )
        return cls([entry for entry in tools if isinstance(entry, Row)])

    def with_rows(self, *rows: Row) -> "Registry":
        """This registry with more rows; a row replaces the one of the same name.

        For tests and evals, which bring tools of their own in place of yours.
        Never for tools that arrive at run time: an MCP server's tool named
        like one of yours would take its row, and its approval
        (ServingRegistry joins those, refusing a name that is taken).
        """
        replaced = {row.name for row in rows}
        kept = [row for row in self.rows if row.name not in replaced]
        return Registry([*kept, *rows], self.unlisted)


class RowSource(Protocol):
    """Tools that arrive once something starts, such as tools/mcp.py's McpServers.

    start() must refuse a tool named like one the registry has (McpServers
    is told their names); the registry refuses it again in any case.
    """

    def start(self) -> list[Row]: ...


class ServingRegistry(Registry):
    """The server's registry: TOOLS at once, your MCP servers' tools from the first request on.

    The servers are not started when the app is built: on AgentCore V2 the
    process is snapshotted after its start-up and restored for every
    session, and a client started before the snapshot would be one MCP
    session (one `mcp-session-id`, one subprocess's pipes) shared by every
    instance. So the app calls start_servers() at the top of each request;
    the first starts the servers and adds their rows, the others return at once.
    """

    def __init__(self, registry: Registry, servers: RowSource | None = None) -> None:
        super().__init__(registry.rows, registry.unlisted)
        self._servers = servers
        self._starting = threading.Lock()

    async def start_servers(self) -> None:
        """Start the MCP servers once, off the event loop; McpServerError names one that failed.

        A failure starts nothing and is not remembered: the next request tries again.
        """
        if self._servers is not None:
            await asyncio.to_thread(self._start)

    def _start(self) -> None:
        with self._starting:  # requests arriving together start the servers once
            if self._servers is None:
                return
            # Joined, never replacing: two rows of one name are refused.
            served = Registry([*self.rows, *self._servers.start()], self.unlisted)
            self.rows, self._by_name, self._servers = served.rows, served._by_name, None


def tool_name(tool: object) -> str:
    """The name of a decorated tool, an AgentTool, or a strands-tools module."""
    name = getattr(tool, "tool_name", None)
    if isinstance(name, str):
        return name
    spec = getattr(tool, "TOOL_SPEC", None)
    if isinstance(spec, dict):
        return spec.get("name", "")
    return getattr(tool, "__name__", "").rsplit(".", 1)[-1]
