"""MCP servers' tools, behind the same gate as every other tool.

Each server gets one Strands MCPClient for the whole process, started on
the process's first request and stopped when it exits: a client per Slack
thread would start a subprocess (or an HTTP session) per thread and leak it
when a run waits hours for an answer, and a client started at import would
be in AgentCore V2's snapshot, one MCP session shared by every restored
instance. A run resumed in this process uses the same live client; one
resumed after a restart gets the new process's client, whose tools have
the same names. Every tool a server offers becomes a registry row: ALLOW
only where yours/mcp_servers.py says so, ASK for every other, whatever
GATE_UNLISTED_TOOLS says, because a server can add tools without this
project changing. A tool that file maps to who may approve it (STARTER,
APPROVERS, users(...)) is asked about, and only they may answer.
gate/registry.py's ServingRegistry starts the servers when settings.USE_MCP
is on.

A server's tool never takes the name of another tool: `ask` offering
`human` would be `ask_human`, and approving the agent's own ask_human would
run the server's code. Which names a server offers is known only once it
runs, so the servers' start refuses such a tool, stops them all and names
both tools' sources; a decision in MCP_DECISIONS that names a tool the
agent already has is refused when the app is built.
"""

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..gate.answerers import ANYONE, AnsweredBy
from ..gate.registry import ALLOW, ASK, Decision, Row
from ..settings import ConfigurationError

if TYPE_CHECKING:  # imported when a server starts: with none listed, start-up stays light
    from strands.tools.mcp import MCPClient


@dataclass(frozen=True)
class Stdio:
    """A server this process starts as a subprocess and talks to over its stdin/stdout."""

    name: str
    command: Sequence[str]
    env: Mapping[str, str] | None = None

    def client(self) -> "MCPClient":
        from mcp import StdioServerParameters, stdio_client
        from strands.tools.mcp import MCPClient

        program, *args = self.command
        params = StdioServerParameters(
            command=program, args=list(args), env=dict(self.env) if self.env else None
        )
        # mcp's stdio_client yields its own stream types, which Strands'
        # MCPTransport does not name, though it reads them as such.
        return MCPClient(lambda: stdio_client(params), prefix=self.name)  # type: ignore[arg-type,return-value]

    def describe(self) -> str:
        return " ".join(self.command)


@dataclass(frozen=True)
class StreamableHttp:
    """A server already running somewhere, reached over MCP's streamable HTTP."""

    name: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)

    def client(self) -> "MCPClient":
        from strands.tools.mcp import MCPClient

        if "url" in inspect.signature(MCPClient).parameters:  # Strands builds the transport
            return MCPClient(url=self.url, headers=dict(self.headers), prefix=self.name)
        # Older Strands, with the mcp 1.x that it installs.
        from mcp.client.streamable_http import (  # type: ignore[attr-defined]  # mcp 1.x only
            streamablehttp_client,
        )

        return MCPClient(
            lambda: streamablehttp_client(self.url, headers=dict(self.headers)), prefix=self.name
        )

    def describe(self) -> str:
        return self.url


class McpServerError(RuntimeError):
    """A server that did not start; the message names it and says where it is listed."""


class McpListError(ConfigurationError):
    """yours/mcp_servers.py lists what cannot be served: two servers of one name, a bad decision."""


class McpServers:
    """The MCP servers of one process: started once, their tools as registry rows.

    `taken` names the tools the agent has before any server starts, each
    with where it is declared: no tool of a server may take one of those
    names, nor another server's tool's.
    """

    def __init__(
        self,
        servers: Sequence[Stdio | StreamableHttp],
        decisions: Mapping[str, str | AnsweredBy],
        taken: Mapping[str, str] | None = None,
    ) -> None:
        names = [server.name for server in servers]
        duplicated = sorted({name for name in names if names.count(name) > 1})
        if duplicated:
            raise McpListError(f"MCP server names must be unique: {', '.join(duplicated)}")
        # Each name as Strands compares names: the name as declared, and where.
        self.taken = {_same_name(name): (name, source) for name, source in (taken or {}).items()}
        claimed = sorted(tool for tool in decisions if _same_name(tool) in self.taken)
        if claimed:
            raise McpListError(
                f"MCP_DECISIONS in yours/mcp_servers.py names {claimed[0]}"
                f"{_taken_by(claimed[0], self.taken[_same_name(claimed[0])])}: no MCP tool may "
                "take another tool's name. Rename the MCP server (its name prefixes its tools) "
                "or the other tool"
            )
        # Checked before any server starts: a bad value found while listing
        # tools would leave started servers behind, and each later request
        # would start another set.
        wrong = {
            tool: gate
            for tool, gate in decisions.items()
            if not isinstance(gate, AnsweredBy) and gate not in (ASK, ALLOW)
        }
        if wrong:
            listed = ", ".join(f"{tool!r}: {gate!r}" for tool, gate in wrong.items())
            raise McpListError(
                "MCP_DECISIONS in yours/mcp_servers.py must map tool names to ASK, ALLOW, "
                "or who may approve them (STARTER, APPROVERS, users(...)): " + listed
            )
        self.servers = servers
        self.decisions: dict[str, tuple[Decision, AnsweredBy]] = {
            tool: (ASK, gate) if isinstance(gate, AnsweredBy) else (_decision(gate), ANYONE)
            for tool, gate in decisions.items()
        }
        self._clients: list[MCPClient] = []

    def start(self) -> list[Row]:
        """Start every server and list its tools; if one fails, stop them all and name it.

        A tool named like one the agent already has, or like another
        server's, fails the start the same way: nothing of any server is
        served, and the message names both sources.
        """
        rows: list[Row] = []
        names = dict(self.taken)  # every name served so far, as Strands compares names
        for server in self.servers:
            try:
                client = server.client()
                client.start()
                self._clients.append(client)  # stopped with the others if listing fails
                tools = client.list_tools_sync()
            except Exception as error:
                self.stop()
                raise McpServerError(
                    f"MCP server {server.name!r} ({server.describe()}) did not start: "
                    f"{error}. Fix or remove it in yours/mcp_servers.py."
                ) from None
            source = f"a tool of MCP server {server.name!r} ({server.describe()})"
            for tool in tools:
                name = tool.tool_name
                if _same_name(name) in names:
                    self.stop()
                    raise McpServerError(
                        f"MCP server {server.name!r} ({server.describe()}) offers a tool named "
                        f"{name}{_taken_by(name, names[_same_name(name)])}: none of the servers' "
                        "tools are served. Rename the server in yours/mcp_servers.py (its name "
                        "prefixes its tools) or the other tool."
                    )
                names[_same_name(name)] = (name, source)
                gate, answered_by = self.decisions.get(name, (ASK, ANYONE))
                rows.append(Row(tool, gate, answered_by=answered_by))
        return rows

    def stop(self) -> None:
        """Stop every client, and with it every subprocess it started."""
        while self._clients:
            self._clients.pop().stop(None, None, None)


def _same_name(name: str) -> str:
    """A tool name as Strands compares names: it refuses two that differ only by '-' and '_'."""
    return name.replace("-", "_")


def _taken_by(name: str, other: tuple[str, str]) -> str:
    """What says, after a tool's name, which tool has it already: that tool's name and source."""
    other_name, source = other
    if other_name == name:
        return f", the name of {source}"
    return f", which Strands takes for {other_name}, {source}"


def _decision(gate: str) -> Decision:
    return ALLOW if gate == ALLOW else ASK
