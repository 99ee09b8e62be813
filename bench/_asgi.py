"""One POST /invocations handed to an app's ASGI interface in this process, as a server hands it over.

For the benches that measure what the app adds to a turn: without a socket,
its noise does not bury a figure of a few per cent. Runs in the project's
environment (the benches that use it start themselves there).
"""

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

App = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


class Reply(NamedTuple):
    first_text: float  # seconds from the request to its first text event
    last_text: float  # ... to its last text event
    end: float  # ... to the response's end
    text: str  # every text event's data, joined


async def post(app: App, session: str, messages: list[dict]) -> Reply:
    """The thread so far, as Welt sends it, with the AgentCore session header."""
    body = json.dumps({"messages": messages}).encode()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/invocations",
        "raw_path": b"/invocations",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"localhost"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"accept", b"text/event-stream"),
            (b"x-amzn-bedrock-agentcore-runtime-session-id", session.encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("localhost", 80),
    }
    sent = False
    ended = asyncio.Event()
    chunks: list[bytes] = []
    text_at: list[float] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await ended.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            assert message["status"] == 200, message
        elif message["type"] == "http.response.body":
            chunk = message.get("body", b"")
            if b'"data"' in chunk:
                text_at.append(time.perf_counter())
            chunks.append(chunk)
            if not message.get("more_body", False):
                ended.set()

    start = time.perf_counter()
    await app(scope, receive, send)
    end = time.perf_counter()
    events = [
        json.loads(line.removeprefix("data: "))
        for line in b"".join(chunks).decode().splitlines()
        if line.startswith("data: ")
    ]
    said = "".join(event.get("data", "") for event in events if isinstance(event, dict))
    assert text_at, (session, events)
    return Reply(text_at[0] - start, text_at[-1] - start, end - start, said)
