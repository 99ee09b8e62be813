"""A request body over MAX_REQUEST_BYTES is refused before anything parses or stores it.

AgentCore takes payloads up to 100 MB, and an unbounded body would be read
into memory, parsed, and (for a run that stops on a question) stored whole.
Welt keeps its own payloads within a budget of 30 MB of files (it drops the
oldest attachments, then the oldest messages), which base64 makes 40 MB on
the wire; a fifth more for the thread's text and the JSON around it gives
the default, 48 MiB. A larger body is not one Welt sends, so it gets HTTP
413 with one line naming the limit and the setting, and the server goes on.

The bytes are counted as they arrive, so a client that declares no
Content-Length (a chunked upload) is stopped at the limit too.
"""

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send


class RequestSizeLimit:
    """ASGI middleware: read the body up to the limit, then hand it to the app."""

    def __init__(
        self,
        app: "ASGIApp",
        max_bytes: int,
        on_refused: "Callable[[Scope, str], None] | None" = None,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        # Told of each refusal, with the line the client is sent (the audit's).
        self.on_refused = on_refused

    async def __call__(self, scope: "Scope", receive: "Receive", send: "Send") -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._refuse(scope, send)
            return
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._refuse(scope, send)
                return
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        delivered = False

        async def replay() -> "Message":
            nonlocal delivered
            if delivered:
                return await receive()  # after the body: the client's disconnect
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    async def _refuse(self, scope: "Scope", send: "Send") -> None:
        message = (
            f"Refused the request: its body is larger than {self.max_bytes:,} bytes "
            "(MAX_REQUEST_BYTES). Nothing of it was read or stored."
        )
        if self.on_refused is not None:
            self.on_refused(scope, message)
        body = json.dumps({"error": message}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _content_length(scope: "Scope") -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
