"""Who is who: the Slack user a request comes from, and the instance that serves it.

Neither is ever taken from what anybody can type or from what every
instance shares. A Slack user is the one Welt verified and AgentCore passes
on (platform/caller.py reads it per request), never the `<@U…>: ` mention
that opens a message. An instance is an id drawn from the kernel at its
first request, never the PID or the hostname: every instance restored from
one AgentCore V2 snapshot (platform/restore.py) is PID 1 on `localhost`,
and shares whatever was drawn before the snapshot.

The gate, memory and a thread's turn name users, and rehearsal names the
instance, so this module sits beside the settings and imports nothing of
the package: code at any level of it can import this.
"""

import secrets
import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class SlackUser:
    """A Slack user as Welt names it: `slack:<team>:<user>`."""

    id: str

    @property
    def mention(self) -> str:
        """How Slack shows the user in a message: <@U…>."""
        return f"<@{self.id.rsplit(':', 1)[1]}>"


_instance: str | None = None
_drawing = threading.Lock()


def instance_id() -> str:
    """An id of this instance (this process), drawn from the kernel when a request first asks.

    Not at import, nor in the warm-up: the snapshot holds whatever was drawn
    by then, and every instance restored from it would share the id.
    AgentCore snapshots before it sends the first /invocations, so an id
    first drawn while serving one belongs to this instance alone. Never use
    os.getpid() or socket.gethostname() as one: 1 and localhost everywhere.
    """
    global _instance
    with _drawing:
        if _instance is None:
            _instance = secrets.token_hex(8)
        return _instance
