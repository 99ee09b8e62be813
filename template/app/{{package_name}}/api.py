"""What yours/ may import from the template: this module, and nothing else of the package.

`copier update` may move any other module of the package; these names stay,
so your tools, prompt and MCP servers keep working across releases. The
template imports yours/ in one place only (factory.py), so nothing here
depends on your code, and your code depends on nothing but this.
"""

from typing import Any

from strands import ToolContext

from .acting.user_tokens import UserToken
from .gate.answerers import ANYONE, APPROVERS, STARTER, AnsweredBy, answer_to, users
from .gate.audit import fingerprint
from .gate.interrupt_names import interrupt_name
from .gate.registry import ALLOW, ASK, Decision, Row
from .model.scripted import ScriptedModel, call, call_in_pieces, reply, use
from .settings import AGENT_NAME, INTERRUPT_PREFIX
from .tools.call_memo import CallMemo
from .tools.lazy import LazyTool
from .tools.mcp import Stdio, StreamableHttp
from .tools.prebuilt import PREBUILT

__all__ = [
    "AGENT_NAME",
    "ALLOW",
    "ANYONE",
    "APPROVERS",
    "ASK",
    "INTERRUPT_PREFIX",
    "PREBUILT",
    "STARTER",
    "AnsweredBy",
    "CallMemo",
    "Decision",
    "LazyTool",
    "Row",
    "ScriptedModel",
    "Stdio",
    "StreamableHttp",
    "UserToken",
    "ask",
    "call",
    "call_in_pieces",
    "interrupt_name",
    "reply",
    "use",
    "users",
]


def ask(
    tool_context: ToolContext,
    name: str,
    reason: dict[str, Any],
    answered_by: AnsweredBy = ANYONE,
) -> Any:
    """The answer to a question, asked as every question of the project is: never `interrupt()`.

    An answer from anyone `answered_by` does not name is not taken: the
    thread is told who may answer, and the question is asked again
    (gate/answerers.py). A question only some people may answer is asked
    alone in its stop, since Welt sends one identity per resume. Every
    answer is on record with who gave it (gate/audit.py).
    """
    shown = fingerprint(tool_context.tool_use.get("input"))
    answer, _ = answer_to(tool_context, name, reason, answered_by, fingerprint=shown)
    return answer
