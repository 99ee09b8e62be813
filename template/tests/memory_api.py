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

import re
import threading
import uuid
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any

from agentcore_api import SERVICE, Answer, problem, serve

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

    def answer(self, operation: str, memory_id: str, body: dict[str, Any]) -> Answer:
        with self.lock:
            self.calls.append(Call(operation, memory_id, body))
            if memory_id in self.failures:
                status, code = self.failures[memory_id]
                return status, {"__type": code, "message": f"{code} (from the test's Memory API)"}
            shape = SERVICE.operation_model(operation).input_shape
            refused = problem(shape, {"memoryId": memory_id, **body})
            if refused:
                return 400, {"__type": "ValidationException", "message": refused}
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


def start_memory_api() -> tuple[MemoryApi, ThreadingHTTPServer]:
    """The server, listening on a port the OS chose, and its state."""
    api = MemoryApi()

    def route(path: str, body: dict[str, Any]) -> Answer | None:
        for pattern, operation in _ROUTES.items():
            matched = pattern.fullmatch(path)
            if matched:
                return api.answer(operation, matched["memoryId"], body)
        return None

    api.url, server = serve(route)
    return api, server
