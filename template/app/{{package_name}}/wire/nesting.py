"""A request nested deeper than MAX_NESTING is refused before anything parses it.

Python's JSON parser, the schema check and Strands' snapshots each descend
one stack frame per level: an answer nested a few hundred levels deep
ended in bedrock-agentcore's generic RecursionError reply and a
traceback, and one nested 100,000 deep in an HTTP 500 before the agent
ever saw it. Welt's own payloads are seven levels deep (a document's
source, in a block, in a message), and an answer's value is whatever JSON
a question's button declared. So the body is measured first, without
parsing it, and a deeper one ends the stream with one `error` event that
names the limit. Nothing is stored, and a waiting question stays open.
"""

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Levels of arrays and objects a request may have: four times what Welt's
# deepest payload needs, room enough for any button value a tool declares.
MAX_NESTING = 32

_INVOCATIONS = "/invocations"
# Everything but quotes and brackets, which is all the measure looks at.
_NOT_STRUCTURE = bytes(byte for byte in range(256) if byte not in b'"[]{}')
_STRING = re.compile(rb'"[^"]*"')
_RUN = re.compile(rb"\[+|\]+")


def nesting_of(body: bytes, most: int = MAX_NESTING) -> int:
    """How deep the JSON's arrays and objects go, counted up to `most + 1`.

    A text with escapes or brackets inside its strings counts as it parses:
    escaped backslashes and quotes go first, then every string, and what is
    left is the brackets alone. Empty pairs are taken away level by level
    (most payloads are gone after a pass or two), and what is still left is
    walked, stopping as soon as it is too deep. A body that is not JSON is
    the parser's to refuse, not this measure's.
    """
    unescaped = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = unescaped.translate(None, _NOT_STRUCTURE)
    brackets = _STRING.sub(b"", structure).replace(b"{", b"[").replace(b"}", b"]")
    levels = 0
    while brackets and levels <= most:
        fewer = brackets.replace(b"[]", b"")
        if len(fewer) == len(brackets):
            break
        brackets, levels = fewer, levels + 1
    depth = deepest = 0
    for run in _RUN.finditer(brackets):
        step = len(run.group())
        depth += step if run.group()[:1] == b"[" else -step
        deepest = max(deepest, depth)
        if levels + deepest > most:
            break
    return levels + deepest


class NestingLimit:
    """ASGI middleware: a POST /invocations nested deeper than the limit gets one `error` event."""

    def __init__(
        self,
        app: "ASGIApp",
        most: int = MAX_NESTING,
        on_refused: "Callable[[Scope, str], None] | None" = None,
    ) -> None:
        self.app = app
        self.most = most
        # Told of each refusal, with the line the client is sent (the audit's).
        self.on_refused = on_refused

    async def __call__(self, scope: "Scope", receive: "Receive", send: "Send") -> None:
        if scope["type"] != "http" or scope.get("path") != _INVOCATIONS:
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        body = b"".join(message.get("body", b"") for message in messages)
        if nesting_of(body, self.most) > self.most:
            await self._refuse(scope, send)
            return

        async def replay() -> "Message":
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: "Scope", send: "Send") -> None:
        message = (
            f"Refused the request: it nests arrays and objects more than {self.most} levels "
            "deep, deeper than any request Welt sends. Nothing was read or stored, and a "
            "question waiting for an answer is still open."
        )
        if self.on_refused is not None:
            self.on_refused(scope, message)
        event = b"data: " + json.dumps({"error": message}).encode() + b"\n\n"
        headers = [(b"content-type", b"text/event-stream; charset=utf-8")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": event})
