"""A server on this machine that answers as Anthropic's and OpenAI's APIs do, for one key at a time.

The agent's model client (Anthropic's or OpenAI's SDK, under Strands)
reaches it through ANTHROPIC_BASE_URL or OPENAI_BASE_URL, over HTTP, and
streams a reply from it as from the provider: Anthropic's Messages API and
OpenAI's Chat Completions, each as server-sent events. It takes the one
key it holds, as the provider takes the key of an account, and answers
any other with the provider's HTTP 401, as after a rotation. It records
which key each request came with.
"""

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# What every reply says.
REPLY = "Hello from the model."


@dataclass
class ModelApi:
    """The key it takes, the keys requests came with, and where it listens."""

    key: str = ""
    keys_used: list[str] = field(default_factory=list)
    url: str = ""
    server: ThreadingHTTPServer | None = None

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def _anthropic_events() -> list[tuple[str, dict]]:
    message: dict[str, object] = {
        "id": "msg_offline",
        "type": "message",
        "role": "assistant",
        "model": "offline",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    return [
        ("message_start", {"type": "message_start", "message": message}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": REPLY},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


def _openai_chunks() -> list[dict]:
    chunk = {
        "id": "chatcmpl-offline",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
    }
    return [
        {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": REPLY}}]},
        {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {
            **chunk,
            "choices": [],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        },
    ]


def start_model_api(key: str) -> ModelApi:
    """Serve on a free port of this machine, in a thread, taking this key; stop() ends it."""
    api = ModelApi(key=key)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            anthropic = self.path.endswith("/v1/messages")
            if anthropic:
                used = self.headers.get("x-api-key", "")
            else:
                used = self.headers.get("Authorization", "").removeprefix("Bearer ")
            api.keys_used.append(used)
            if used != api.key:
                refused = {"type": "authentication_error", "message": "invalid x-api-key"}
                if anthropic:
                    self._json(401, {"type": "error", "error": refused})
                else:
                    self._json(401, {"error": {**refused, "code": "invalid_api_key"}})
                return
            if anthropic:
                events = [
                    f"event: {name}\ndata: {json.dumps(data)}\n\n"
                    for name, data in _anthropic_events()
                ]
            else:
                events = [f"data: {json.dumps(chunk)}\n\n" for chunk in _openai_chunks()]
                events.append("data: [DONE]\n\n")
            body = "".join(events).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, reply: dict) -> None:
            data = json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            """Quiet: the test reads the keys used, not a log."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    api.url, api.server = f"http://127.0.0.1:{server.server_address[1]}", server
    return api
