"""Off AgentCore, the server answers what a tool of this machine sends, and nothing a web page can.

`make serve`, `make rehearse` and the agent `make playground` starts listen
on 127.0.0.1, which every browser on the machine reaches too. Any page the
developer visits could post a turn or an approval blind, in a body a
browser sends anywhere without asking first: text/plain, a form or
multipart (CSRF); the app would parse it as JSON all the same. A page that
makes its own name resolve to 127.0.0.1 (DNS rebinding) is the agent's own
origin to the browser, so it could also read the replies and send any
header, an approver's user id among them, and approve its own calls.

So a request must be addressed to localhost, 127.0.0.1 or [::1], and carry
no Origin; a POST /invocations must be application/json. That is what
Welt's local mode, curl and the playground's server send, and nothing a
page can send without a CORS preflight, which this server never answers.
Anything else gets a plain HTTP refusal, 403 or 415, with one log line
saying why; nothing of its body is read, and nothing reaches the wire.

The Host's name is checked, not its port: a rebinding page chooses the
name, while the port is whichever one reached this server, and through a
forward (`ssh -L`, `docker run -p`) that is not always PORT.
Every Origin is refused, the playground's included: a browser sends one
with each POST, and no tool of this machine does. The playground's page
posts to its own server, which forwards only Welt's headers
(playground/server.py), so no setting needs to name its origin.

On AgentCore the guard is left out (factory.py): the service's front door
takes only signed requests, and what reaches the container is addressed
by the service, not as localhost.
"""

import json
import logging
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

logger = logging.getLogger(__name__)

# Names of this machine, each with its port or none, as a Host header gives them.
LOCAL_HOST = re.compile(r"(localhost|127\.0\.0\.1|\[::1\])(:[0-9]{1,5})?", re.IGNORECASE)
LOCAL_NAMES = "localhost, 127.0.0.1 or [::1]"
JSON = "application/json"
_INVOCATIONS = "/invocations"

# How much of a refused header a log line shows: enough to recognise it,
# never a header of kilobytes copied whole.
SHOWN_OF_A_HEADER = 80


class LocalOnly:
    """ASGI middleware: a request a web page could have sent gets 403 or 415, unread."""

    def __init__(self, app: "ASGIApp") -> None:
        self.app = app

    async def __call__(self, scope: "Scope", receive: "Receive", send: "Send") -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = refusal_of(scope)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, why = refusal
        message = f"Refused {scope['method']} {scope['path']}: {why}"
        logger.warning(message)
        body = json.dumps({"error": message}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def refusal_of(scope: "Scope") -> tuple[int, str] | None:
    """The status and the reason a request is refused with, or None for one a local tool sent."""
    hosts = _values(scope, b"host")
    if len(hosts) != 1 or not LOCAL_HOST.fullmatch(hosts[0]):
        return 403, (
            f"its Host is {_shown(hosts)}, not a name of this machine ({LOCAL_NAMES}): "
            "a web page whose own name leads here (DNS rebinding) sends such requests"
        )
    origins = _values(scope, b"origin")
    if origins:
        return 403, (
            f"it comes from the web page {_shown(origins)} (Origin): the local server answers the "
            "tools of this machine (Welt's local mode, curl, the playground's server), "
            "which send no Origin"
        )
    if scope["method"] == "POST" and scope["path"] == _INVOCATIONS:
        kinds = _values(scope, b"content-type")
        if len(kinds) != 1 or kinds[0].split(";", 1)[0].strip().lower() != JSON:
            return 415, (
                f"its Content-Type is {_shown(kinds)}, not {JSON}, the one Welt sends: "
                "a web page may send text, form and multipart bodies anywhere without asking"
            )
    return None


def _values(scope: "Scope", name: bytes) -> list[str]:
    return [value.decode("latin-1") for key, value in scope["headers"] if key == name]


def _shown(values: list[str]) -> str:
    """The header's values as a log line may show them: escaped, each cut short."""
    if not values:
        return "none"
    return ", ".join(
        repr(value)
        if len(value) <= SHOWN_OF_A_HEADER
        else f"{value[:SHOWN_OF_A_HEADER]!r}... ({len(value):,} characters)"
        for value in values
    )
