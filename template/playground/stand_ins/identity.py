"""AgentCore Identity's data plane on this machine, for a tool acting as the user (USER_FEDERATION).

No emulator of AgentCore Identity exists (moto has none). This answers the
calls of the consent flow over HTTP, as the service's REST-JSON protocol
does, at the paths botocore's `bedrock-agentcore` model gives:
GetResourceOauth2Token (USER_FEDERATION), CompleteResourceTokenAuth and
GetWorkloadAccessTokenForUserId. Real boto3 reaches it through
AWS_ENDPOINT_URL_BEDROCK_AGENTCORE: botocore checks each request against
its model before it leaves, but leaves lengths, patterns, enums and
unions to the service, so every request is checked again here against the
same model, and one the service would refuse is refused with its error.

It plays the service's side of the flow and the provider's consent page:
- a workload access token names a user (`users`, as
  GetWorkloadAccessTokenForUserId mints one; `local:<user id>`, what the
  agent sends off AgentCore, is taken as that user, which real Identity
  never would);
- a token vault by (user id, provider);
- without a token, a pending session: `authorizationUrl` is this server's
  own consent page, whose "Allow as <account>" sends the browser to the
  session's return URL with `?session_id=<sessionUri>`, as Identity's
  redirect after consent does (the samples of AWS read that parameter;
  unverified against a real account);
- CompleteResourceTokenAuth with the session's own user id puts a new
  token in the vault, minted for the account that allowed it; any other
  user id is refused, as Identity refuses a user who did not start it.
`revoke(user, provider)` forgets a token, as a user revoking the app at
the provider would: the resource API then answers it with 401.
"""

import re
import secrets
import threading
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import botocore.session
from botocore.model import Shape

from .serving import Request, Response, button, json_response, page, redirect, serve

SERVICE = botocore.session.get_session().get_service_model("bedrock-agentcore")
GET_TOKEN = "GetResourceOauth2Token"
COMPLETE = "CompleteResourceTokenAuth"
WORKLOAD_TOKEN_FOR_USER = "GetWorkloadAccessTokenForUserId"
OPERATIONS = {
    SERVICE.operation_model(name).http["requestUri"]: name
    for name in (GET_TOKEN, COMPLETE, WORKLOAD_TOKEN_FOR_USER)
}

# The provider's consent page this server plays: GET shows it, POST answers it.
CONSENT_PAGE = "/provider/consent"
# What the agent sends as its workload token off AgentCore: local:<user id>.
LOCAL_TOKEN_PREFIX = "local:"
SESSION_URI_PREFIX = "urn:ietf:params:oauth:request_uri:"


def problem(shape: Shape, value: Any, where: str = "") -> str:
    """What the service would refuse in this value of the shape, or ""."""
    meta = shape.metadata
    name = where.rstrip(".") or "input"
    if shape.type_name == "structure":
        if not isinstance(value, dict):
            return f"{name} must be an object"
        for member in shape.required_members:
            if member not in value:
                return f"{where}{member} is required"
        unknown = set(value) - set(shape.members)
        if unknown:
            return f"{name} has no member {sorted(unknown)[0]}"
        if meta.get("union") and len(value) != 1:
            return f"{name} must set exactly one of {sorted(shape.members)}"
        for member, member_shape in shape.members.items():
            if member in value:
                found = problem(member_shape, value[member], f"{where}{member}.")
                if found:
                    return found
        return ""
    if shape.type_name == "list":
        if not isinstance(value, list):
            return f"{name} must be a list"
        if not meta.get("min", 0) <= len(value) <= meta.get("max", len(value)):
            return f"{name} has {len(value)} items"
        return next((p for item in value if (p := problem(shape.member, item, where))), "")
    if shape.type_name == "map":
        if not isinstance(value, dict):
            return f"{name} must be an object"
        for key, item in value.items():
            found = problem(shape.key, key, f"{where}key.") or problem(shape.value, item, where)
            if found:
                return found
        return ""
    if shape.type_name == "boolean":
        return "" if isinstance(value, bool) else f"{name} must be a boolean"
    if shape.type_name == "string":
        if not isinstance(value, str):
            return f"{name} must be a string"
        if not meta.get("min", 0) <= len(value) <= meta.get("max", len(value)):
            return f"{name} must be {meta.get('min', 0)} to {meta.get('max')} long"
        if "pattern" in meta and not re.fullmatch(meta["pattern"], value):
            return f"{name} does not match {meta['pattern']}"
        if "enum" in meta and value not in meta["enum"]:
            return f"{name} must be one of {meta['enum']}"
    return ""


@dataclass
class Call:
    """One request the server answered: the operation, its JSON body, and the status given."""

    operation: str
    body: dict[str, Any]
    status: int


@dataclass
class Session:
    """One consent under way: whose, for what, where the browser goes after it."""

    uri: str
    user: str
    provider: str
    scopes: list[str]
    return_url: str | None
    status: str = "IN_PROGRESS"  # then CONSENTED (at the provider), COMPLETED or FAILED
    account: str | None = None  # who allowed it at the provider


@dataclass(frozen=True)
class Minted:
    """An access token this Identity put in its vault: the provider account it acts as."""

    user: str
    provider: str
    account: str
    scopes: tuple[str, ...]


@dataclass
class IdentityStandIn:
    """The service's state: read and changed by tests and the playground."""

    url: str = ""
    # Workload access tokens AgentCore would have minted, and the user id each names.
    users: dict[str, str] = field(default_factory=dict)
    # Credential providers that exist; empty: any name exists.
    providers: set[str] = field(default_factory=set)
    # The provider account of each user id; one not listed is the user id's last part.
    accounts: dict[str, str] = field(default_factory=dict)
    # The workload identity's allowed return URLs; empty: any.
    allowed_return_urls: set[str] = field(default_factory=set)
    vault: dict[tuple[str, str], str] = field(default_factory=dict)
    minted: dict[str, Minted] = field(default_factory=dict)
    sessions: dict[str, Session] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    # The Python API of tests and the playground.

    def workload_token(self, user: str) -> str:
        """A new workload access token for a user id, as AgentCore mints one per request."""
        token = f"wat-{secrets.token_urlsafe(16)}"
        with self.lock:
            self.users[token] = user
        return token

    def account_of(self, user: str) -> str:
        return self.accounts.get(user) or user.rsplit(":", 1)[-1].lower()

    def token_of(self, user: str, provider: str) -> str | None:
        """The access token the vault holds for a user and provider, if any."""
        return self.vault.get((user, provider))

    def acting_as(self, access_token: str) -> Minted | None:
        """Whom an access token acts for; None if never minted here, or revoked."""
        return self.minted.get(access_token)

    def revoke(self, user: str, provider: str) -> None:
        """Forget a user's token, as revoking the app at the provider would: refused from now."""
        with self.lock:
            token = self.vault.pop((user, provider), None)
            if token is not None:
                self.minted.pop(token, None)

    def calls_of(self, operation: str) -> list[Call]:
        return [call for call in self.calls if call.operation == operation]

    # The service.

    def answer(self, request: Request) -> Response:
        if request.path == CONSENT_PAGE:
            return self._consent(request)
        operation = OPERATIONS.get(request.path)
        if request.method != "POST" or operation is None:
            return _error(404, "UnknownOperationException", request.path)
        try:
            body = request.json()
        except ValueError:
            return _error(400, "SerializationException", "the body is not JSON")
        with self.lock:
            status, reply = self._operation(operation, body)
            self.calls.append(Call(operation, body, status))
        if status >= 400:
            return _error(status, reply["__type"], reply["message"])
        return json_response(status, reply)

    def _operation(self, operation: str, body: Any) -> tuple[int, dict[str, Any]]:
        refused = problem(SERVICE.operation_model(operation).input_shape, body)
        if refused:
            return 400, {"__type": "ValidationException", "message": refused}
        if operation == GET_TOKEN:
            return self._get_token(body)
        if operation == COMPLETE:
            return self._complete(body)
        token = f"wat-{secrets.token_urlsafe(16)}"
        self.users[token] = body["userId"]
        return 200, {"workloadAccessToken": token}

    def _get_token(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if body["oauth2Flow"] != "USER_FEDERATION":
            return 400, _refusal("ValidationException", "this stand-in plays USER_FEDERATION only")
        workload_token = body["workloadIdentityToken"]
        user = self.users.get(workload_token)
        if user is None and workload_token.startswith(LOCAL_TOKEN_PREFIX):
            user = workload_token.removeprefix(LOCAL_TOKEN_PREFIX)
        if not user:
            return 401, _refusal("UnauthorizedException", "unknown workload access token")
        provider = body["resourceCredentialProviderName"]
        if self.providers and provider not in self.providers:
            return 404, _refusal(
                "ResourceNotFoundException", f"credential provider {provider} not found"
            )
        return_url = body.get("resourceOauth2ReturnUrl")
        if return_url and self.allowed_return_urls and return_url not in self.allowed_return_urls:
            return 400, _refusal(
                "ValidationException", "resourceOauth2ReturnUrl is not allowed for the workload"
            )
        token = self.vault.get((user, provider))
        if token is not None and not body.get("forceAuthentication"):
            return 200, {"accessToken": token}
        session = self.sessions.get(body.get("sessionUri") or "")
        if session is not None and (session.user, session.provider) != (user, provider):
            return 400, _refusal("ValidationException", "sessionUri is another user's")
        if session is None or session.status in ("COMPLETED", "FAILED"):
            uri = f"{SESSION_URI_PREFIX}{secrets.token_urlsafe(24)}"
            session = Session(uri, user, provider, list(body["scopes"]), return_url)
            self.sessions[uri] = session
        authorization = f"{self.url}{CONSENT_PAGE}?{urlencode({'request_uri': session.uri})}"
        return 200, {
            "authorizationUrl": authorization,
            "sessionUri": session.uri,
            "sessionStatus": "IN_PROGRESS",
        }

    def _complete(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        identifier = body["userIdentifier"]
        if "userId" not in identifier:
            return 400, _refusal("ValidationException", "this stand-in takes a userId only")
        session = self.sessions.get(body["sessionUri"])
        if session is None:
            return 404, _refusal("ResourceNotFoundException", "no such session")
        if identifier["userId"] != session.user:
            return 403, _refusal(
                "AccessDeniedException", "the user is not the one who started the session"
            )
        if session.status != "CONSENTED" or session.account is None:
            return 400, _refusal(
                "ValidationException", f"the session is {session.status}, not consented"
            )
        token = f"gho_{secrets.token_urlsafe(24)}"
        old = self.vault.get((session.user, session.provider))
        if old is not None:
            self.minted.pop(old, None)
        self.vault[(session.user, session.provider)] = token
        self.minted[token] = Minted(
            session.user, session.provider, session.account, tuple(session.scopes)
        )
        session.status = "COMPLETED"
        return 200, {}

    def _consent(self, request: Request) -> Response:
        """The provider's consent page: allow as one of the accounts it knows, or deny."""
        fields = request.form() if request.method == "POST" else request.query
        with self.lock:
            session = self.sessions.get(fields.get("request_uri", ""))
            if session is None or session.status != "IN_PROGRESS":
                return page(400, "Nothing to consent to", "This link is unknown or was used.")
            if request.method == "GET":
                mine = self.account_of(session.user)
                accounts = [mine, *sorted(set(self.accounts.values()) - {mine})]
                choices = "".join(
                    button(
                        CONSENT_PAGE,
                        f"Allow as {account}",
                        request_uri=session.uri,
                        account=account,
                    )
                    for account in accounts
                )
                choices += button(CONSENT_PAGE, "Deny", request_uri=session.uri, account="")
                return page(
                    200,
                    f"Allow access to {session.provider}",
                    f"An agent asks for {', '.join(session.scopes) or 'no scopes'}.",
                    forms=choices,
                )
            if not fields.get("account"):
                session.status = "FAILED"
                return page(200, "Denied", "Nothing was shared. You can close this page.")
            session.status, session.account = "CONSENTED", fields["account"]
        if not session.return_url:
            return page(200, "Allowed", "Nothing to return to: no return URL was given.")
        return redirect(_with_query(session.return_url, session_id=session.uri))


def _with_query(url: str, **added: str) -> str:
    parts = urlsplit(url)
    query = [*parse_qsl(parts.query, keep_blank_values=True), *added.items()]
    return urlunsplit(parts._replace(query=urlencode(query)))


def _refusal(code: str, message: str) -> dict[str, Any]:
    return {"__type": code, "message": message}


def _error(status: int, code: str, message: str) -> Response:
    return json_response(status, {"__type": code, "message": message}, ("x-amzn-ErrorType", code))


def start_identity(
    host: str = "127.0.0.1", port: int = 0
) -> tuple[IdentityStandIn, ThreadingHTTPServer]:
    """The stand-in's state, and its server listening on a port the OS chose (or the one given)."""
    state = IdentityStandIn()
    state.url, server = serve(state.answer, host, port)
    return state, server
