"""A server on this machine that answers the AgentCore Identity call the agent makes for its key.

No emulator of AgentCore Identity exists (moto has none), so this answers
the one data-plane call the agent makes, GetResourceApiKey, over HTTP, as
the service's REST-JSON protocol does. The agent reaches it through real
boto3, which validates each request against botocore's service model
before it leaves and parses each reply; this server checks each request
again against the same model's constraints, as the service would.

It holds the keys of its credential providers, the workload access tokens
it accepts, and every call it answered; a test makes it refuse a provider
(denied, throttled) the way Identity does.
"""

import threading
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any

from agentcore_api import SERVICE, Answer, problem, serve

_PATH = "/identities/api-key"
_INPUT = SERVICE.operation_model("GetResourceApiKey").input_shape


@dataclass
class Call:
    """One GetResourceApiKey the server answered."""

    provider: str
    token: str


@dataclass
class IdentityApi:
    """Keys by provider, the tokens AgentCore would have minted, calls made, refusals to give."""

    keys: dict[str, str] = field(default_factory=dict)
    tokens: set[str] = field(default_factory=set)
    calls: list[Call] = field(default_factory=list)
    # (HTTP status, error code) to answer a provider's calls with, by provider.
    refusals: dict[str, tuple[int, str]] = field(default_factory=dict)
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, body: dict[str, Any]) -> Answer:
        with self.lock:
            refused = problem(_INPUT, body)
            if refused:
                return 400, {"__type": "ValidationException", "message": refused}
            provider, token = body["resourceCredentialProviderName"], body["workloadIdentityToken"]
            self.calls.append(Call(provider, token))
            if provider in self.refusals:
                status, code = self.refusals[provider]
                return status, {"__type": code, "message": f"{code} (from the test's Identity API)"}
            if token not in self.tokens:
                return 401, {"__type": "UnauthorizedException", "message": "unknown token"}
            if provider not in self.keys:
                return 404, {
                    "__type": "ResourceNotFoundException",
                    "message": f"credential provider {provider} not found",
                }
            return 200, {"apiKey": self.keys[provider]}


def start_identity_api() -> tuple[IdentityApi, ThreadingHTTPServer]:
    """The server, listening on a port the OS chose, and its state."""
    api = IdentityApi()
    api.url, server = serve(lambda path, body: api.answer(body) if path == _PATH else None)
    return api, server
