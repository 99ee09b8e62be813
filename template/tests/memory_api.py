"""A server on this machine that answers the AgentCore Memory calls the agent makes.

No emulator of AgentCore Memory exists (moto has none), so this answers the
two data-plane calls the agent makes, CreateEvent and RetrieveMemoryRecords,
over HTTP, as the service's REST-JSON protocol does. The agent reaches it
through real boto3: botocore validates every request against its own
service model before it leaves, and parses every reply. This server checks
each request again against the same model's constraints (required members,
lengths and patterns), which botocore leaves to the service, so an actor or
session id that AWS would refuse is refused here too.

It does not extract anything: a test puts the long-term records a strategy
would have made into a namespace itself (`keep`), and reads the events the
agent wrote and every call it made.
"""

import json
import re
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import botocore.session
from botocore.model import Shape

_MODEL = botocore.session.get_session().get_service_model("bedrock-agentcore")
_ROUTES = {
    re.compile(r"/memories/(?P<memoryId>[^/]+)/events"): "CreateEvent",
    re.compile(r"/memories/(?P<memoryId>[^/]+)/retrieve"): "RetrieveMemoryRecords",
}


@dataclass
class Call:
    """One request the server answered, by its operation's name."""

    operation: str
    memory_id: str
    body: dict[str, Any]


@dataclass
class MemoryApi:
    """What the server holds: records by memory and namespace, events, calls, failures to give."""

    records: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    # (HTTP status, error code) to answer every call to a memory with, by memory id.
    failures: dict[str, tuple[int, str]] = field(default_factory=dict)
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, operation: str, memory_id: str, body: dict[str, Any]) -> tuple[int, dict]:
        with self.lock:
            self.calls.append(Call(operation, memory_id, body))
            if memory_id in self.failures:
                status, code = self.failures[memory_id]
                return status, {"__type": code, "message": f"{code} (from the test's Memory API)"}
            shape = _MODEL.operation_model(operation).input_shape
            problem = _problem(shape, {"memoryId": memory_id, **body})
            if problem:
                return 400, {"__type": "ValidationException", "message": problem}
            if operation == "CreateEvent":
                event = {**body, "memoryId": memory_id, "eventId": uuid.uuid4().hex}
                self.events.append(event)
                return 201, {"event": event}
            namespace = body.get("namespace", "")
            found = self.records.get((memory_id, namespace), [])
            top = body["searchCriteria"].get("topK", 10)
            return 200, {
                "memoryRecordSummaries": [
                    {
                        "memoryRecordId": f"mem-{index:012d}",
                        "content": {"text": text},
                        "memoryStrategyId": "strategy-0123456789",
                        "namespaces": [namespace],
                        "createdAt": 1_700_000_000,
                    }
                    for index, text in enumerate(found[:top])
                ]
            }


def _problem(shape: Shape, value: Any, where: str = "") -> str:
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
                problem = _problem(member, value[name], f"{where}{name}.")
                if problem:
                    return problem
        return ""
    if shape.type_name == "list":
        if not isinstance(value, list):
            return f"{where} must be a list"
        if not meta.get("min", 0) <= len(value) <= meta.get("max", len(value)):
            return f"{where} has {len(value)} items"
        for item in value:
            problem = _problem(shape.member, item, where)
            if problem:
                return problem
        return ""
    if shape.type_name == "string" and isinstance(value, str):
        if not meta.get("min", 0) <= len(value) <= meta.get("max", len(value)):
            return f"{where.rstrip('.')} must be {meta.get('min', 0)} to {meta.get('max')} long"
        if "pattern" in meta and not re.fullmatch(meta["pattern"], value):
            return f"{where.rstrip('.')} {value!r} does not match {meta['pattern']}"
    return ""


def start_memory_api() -> tuple[MemoryApi, ThreadingHTTPServer]:
    """The server, listening on a port the OS chose, and its state."""
    api = MemoryApi()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            for route, operation in _ROUTES.items():
                matched = route.fullmatch(self.path.split("?", 1)[0])
                if matched:
                    status, reply = api.answer(operation, matched["memoryId"], body)
                    break
            else:
                status, reply = 404, {"__type": "UnknownOperationException", "message": self.path}
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
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return api, server
