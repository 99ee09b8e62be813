"""strands-tools that ask for consent on standard input, handed to the gate instead.

Nobody can type into the process from Slack, so a tool that waits on stdin
for a "y" would hang the thread. Those tools skip their prompt when
BYPASS_TOOL_CONSENT=true; setting it silences the prompts of every such
tool in the process, so it is set only when each one the agent has waits
for the gate's approval.
"""

import os

from ..settings import ConfigurationError
from .registry import ASK, Registry

# The strands-tools that prompt on stdin unless BYPASS_TOOL_CONSENT=true.
STDIO_CONSENT_TOOLS = frozenset(
    {
        "cron",
        "editor",
        "environment",
        "file_write",
        "http_request",
        "load_tool",
        "mem0_memory",
        "memory",
        "python_repl",
        "shell",
        "use_aws",
        "use_computer",
    }
)


class UngatedConsentTool(ConfigurationError):
    """A tool that would prompt on standard input, without a row that makes the gate ask."""


def hand_consent_to_gate(registry: Registry) -> None:
    """Let the gate, not a stdio prompt, ask for consent; refuse to do half of it.

    An ungated one raises, at start-up (factory.py) and for every agent built.
    """
    names = {row.name for row in registry.rows} & STDIO_CONSENT_TOOLS
    ungated = sorted(name for name in names if registry.decision_for(name) != ASK)
    if ungated:
        raise UngatedConsentTool(
            f"{', '.join(ungated)} would ask for consent on standard input, which Slack "
            "cannot answer; give them ASK in their rows (yours/tools/__init__.py) so the gate "
            "asks instead"
        )
    if names:
        os.environ["BYPASS_TOOL_CONSENT"] = "true"
