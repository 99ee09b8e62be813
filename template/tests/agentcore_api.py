"""What the tests' AgentCore servers share: botocore's model of the service, and HTTP.

AgentCore Memory and AgentCore Identity have no emulator (moto has none),
so tests/memory_api.py and tests/identity_api.py answer the calls the agent
makes, as the service's REST-JSON protocol does. botocore validates every
request against its service model before it leaves, but leaves lengths and
patterns to the service: `problem` checks those here, as AWS would.
"""

import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import botocore.session
from botocore.model import Shape

SERVICE = botocore.session.get_session().get_service_model("bedrock-agentcore")

# An answer: the HTTP status, and the JSON body (with "__type" when it is an error).
Answer = tuple[int, dict[str, Any]]


def problem(shape: Shape, value: Any, where: str = "") -> str:
    """What the service would refuse in this value of the shape, or ""."""
    meta = shape.metadata
    if shape.type_name == "structure":
        if not isinstance(value, dict):
            return f"{where or 'input'} must be an object"
        for name in shape.required_members:
            if name not in value:
                return f"{where}{name} is required"
        for name, member in shape.members.items():
            if name in value:
                found = problem(member, value[name], f"{where}{name}.")
                if found:
                    return found
        return ""
    if shape.type_name == "list":
        if not isinstance(value, list):
            return f"{where} must be a list"
        if not meta.get("min", 0) <= len(value) <= meta.get("max", len(value)):
            return f"{where} has {len(value)} items"
        for item in value:
            found = problem(shape.member, item, where)
            if found:
                return found
        return ""
    if shape.type_name == "string" and isinstance(value, str):
        if not meta.get("min", 0) <= len(value) <= meta.get("max", len(value)):
            return f"{where.rstrip('.')} must be {meta.get('min', 0)} to {meta.get('max')} long"
        if "pattern" in meta and not re.fullmatch(meta["pattern"], value):
            return f"{where.rstrip('.')} {value!r} does not match {meta['pattern']}"
    return ""


def serve(
    answer: Callable[[str, dict[str, Any]], Answer | None],
) -> tuple[str, ThreadingHTTPServer]:
    """A server on a port the OS chose that answers each POST with answer(path, body).

    None from answer is a path the service does not have.
    """

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            answered = answer(self.path.split("?", 1)[0], body)
            if answered is None:
                answered = 404, {"__type": "UnknownOperationException", "message": self.path}
            status, reply = answered
            data = json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            if status >= 400:
                self.send_header("x-amzn-ErrorType", reply["__type"])
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the tests read the calls, not a log

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    # Polled every 10 ms: shutdown() waits for the loop's next look, 0.5 s by default.
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}", server
