"""Sign in with Slack on this machine: an OpenID Connect issuer whose people are a fixed cast.

What the session-binding endpoint talks to instead of slack.com: the
discovery document, the signing keys, an authorize page listing people
("Sign in as Alice", "Sign in as Bob": whoever presses the button is that
person, as a browser signed in to Slack would be), and a token endpoint
that swaps a code for RS256 ID tokens carrying what Slack's carry (iss,
aud, sub, nonce, exp, iat, `https://slack.com/user_id`,
`https://slack.com/team_id`). The signing key is made when it starts.

Its paths are Slack's (`/openid/connect/authorize`,
`/api/openid.connect.token`, `/openid/connect/keys`), and, like Slack's
token endpoint, it answers a bad exchange with HTTP 200 and
`{"ok": false, "error": ...}`. It checks what a real issuer checks: the
client and its secret, the registered redirect URI, `scope=openid`, and
codes used once. To test a relying party, a test can make it sign with
another key than the one it publishes (`signing_key`) or put other claims
in the next ID tokens (`claims_override`).
"""

import base64
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlencode

from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

from .serving import Request, Response, button, json_response, page, redirect, serve

AUTHORIZE_PATH = "/openid/connect/authorize"
TOKEN_PATH = "/api/openid.connect.token"
KEYS_PATH = "/openid/connect/keys"
DISCOVERY_PATH = "/.well-known/openid-configuration"
ID_TOKEN_SECONDS = 300
CODE_SECONDS = 600


@dataclass(frozen=True)
class Person:
    """Someone who can sign in: the name on the button, and their Slack ids."""

    name: str
    user_id: str
    team_id: str

    @property
    def user(self) -> str:
        """The identity Welt verifies: slack:<team>:<user>."""
        return f"slack:{self.team_id}:{self.user_id}"


@dataclass(frozen=True)
class Client:
    secret: str
    redirect_uris: tuple[str, ...]


@dataclass(frozen=True)
class _Code:
    client_id: str
    redirect_uri: str
    person: Person
    nonce: str | None
    expires: float


@dataclass(frozen=True)
class SignIn:
    """One ID token issued: to whom, for which client."""

    person: Person
    client_id: str
    claims: dict[str, Any]


def new_signing_key(kid: str | None = None) -> RSAKey:
    """An RSA key to sign ID tokens with, named by kid (by default a kid of its own)."""
    return RSAKey.generate_key(2048, parameters={"kid": kid or secrets.token_hex(8)})


@dataclass
class SlackOpenId:
    """The issuer's state: its people, clients, keys, and the ID tokens it issued."""

    url: str = ""
    people: list[Person] = field(default_factory=list)
    clients: dict[str, Client] = field(default_factory=dict)
    # The key whose public half /openid/connect/keys publishes.
    published_key: RSAKey = field(default_factory=new_signing_key)
    # The key ID tokens are signed with: the published one, unless a test says otherwise.
    signing_key: RSAKey | None = None
    # Claims put in (or, None, left out of) every ID token from now on.
    claims_override: dict[str, Any] = field(default_factory=dict)
    issued: list[SignIn] = field(default_factory=list)
    codes: dict[str, _Code] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def register(self, client_id: str, secret: str, *redirect_uris: str) -> None:
        """A Slack app allowed to sign people in, with its redirect URLs."""
        self.clients[client_id] = Client(secret, redirect_uris)

    def person(self, name: str) -> Person:
        return next(each for each in self.people if each.name == name)

    def discovery(self) -> dict[str, Any]:
        return {
            "issuer": self.url,
            "authorization_endpoint": f"{self.url}{AUTHORIZE_PATH}",
            "token_endpoint": f"{self.url}{TOKEN_PATH}",
            "jwks_uri": f"{self.url}{KEYS_PATH}",
            "scopes_supported": ["openid", "profile", "email"],
            "response_types_supported": ["code"],
            "response_modes_supported": ["form_post"],
            "grant_types_supported": ["authorization_code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
            "claims_supported": ["sub", "auth_time", "iss", "nonce"],
        }

    def answer(self, request: Request) -> Response:
        if request.path == DISCOVERY_PATH:
            return json_response(200, self.discovery())
        if request.path == KEYS_PATH:
            return json_response(200, KeySet([self.published_key]).as_dict(private=False))
        if request.path == AUTHORIZE_PATH:
            return self._authorize(request)
        if request.path == TOKEN_PATH and request.method == "POST":
            return self._token(request)
        return json_response(404, {"ok": False, "error": "unknown_method"})

    def _authorize(self, request: Request) -> Response:
        asked = request.form() if request.method == "POST" else request.query
        client = self.clients.get(asked.get("client_id", ""))
        if client is None:
            return page(400, "Something went wrong", "This app is not known to Slack.")
        redirect_uri = asked.get("redirect_uri", "")
        if redirect_uri not in client.redirect_uris:
            return page(
                400, "Something went wrong", "redirect_uri did not match any configured URIs."
            )
        if asked.get("response_type") != "code" or "openid" not in asked.get("scope", "").split():
            return page(400, "Something went wrong", "Sign in with Slack needs scope=openid, code.")
        kept = {
            name: asked[name]
            for name in ("client_id", "redirect_uri", "response_type", "scope", "state", "nonce")
            if name in asked
        }
        if request.method == "GET":
            choices = "".join(
                button(AUTHORIZE_PATH, f"Sign in as {person.name}", **kept, person=person.user)
                for person in self.people
            )
            return page(200, "Sign in to Slack", "Choose who you are.", forms=choices)
        person = next((each for each in self.people if each.user == asked.get("person")), None)
        if person is None:
            return page(400, "Something went wrong", "Nobody by that name here.")
        code = secrets.token_urlsafe(24)
        with self.lock:
            self.codes[code] = _Code(
                asked["client_id"],
                redirect_uri,
                person,
                asked.get("nonce"),
                time.time() + CODE_SECONDS,
            )
        back = {"code": code, **({"state": asked["state"]} if "state" in asked else {})}
        separator = "&" if "?" in redirect_uri else "?"
        return redirect(f"{redirect_uri}{separator}{urlencode(back)}")

    def _token(self, request: Request) -> Response:
        form = request.form()
        client_id, secret = _client_credentials(request, form)
        client = self.clients.get(client_id)
        if client is None or not secrets.compare_digest(client.secret, secret):
            return json_response(200, {"ok": False, "error": "invalid_client_id"})
        with self.lock:
            code = self.codes.pop(form.get("code", ""), None)
        if form.get("grant_type", "authorization_code") != "authorization_code":
            return json_response(200, {"ok": False, "error": "invalid_grant_type"})
        if code is None or code.client_id != client_id or code.expires < time.time():
            return json_response(200, {"ok": False, "error": "invalid_code"})
        if form.get("redirect_uri") != code.redirect_uri:
            return json_response(200, {"ok": False, "error": "bad_redirect_uri"})
        access_token = f"xoxp-{secrets.token_hex(16)}"
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.url,
            "sub": code.person.user_id,
            "aud": client_id,
            "exp": now + ID_TOKEN_SECONDS,
            "iat": now,
            "auth_time": now,
            "https://slack.com/user_id": code.person.user_id,
            "https://slack.com/team_id": code.person.team_id,
            "name": code.person.name,
        }
        if code.nonce is not None:
            claims["nonce"] = code.nonce
        claims.update(self.claims_override)
        claims = {name: value for name, value in claims.items() if value is not None}
        key = self.signing_key or self.published_key
        id_token = jwt.encode({"alg": "RS256", "kid": key.kid or ""}, claims, key)
        with self.lock:
            self.issued.append(SignIn(code.person, client_id, claims))
        return json_response(
            200,
            {
                "ok": True,
                "access_token": access_token,
                "token_type": "Bearer",
                "id_token": id_token,
            },
        )


def _client_credentials(request: Request, form: dict[str, str]) -> tuple[str, str]:
    """client_secret_basic (the Authorization header) or client_secret_post (the form)."""
    scheme, _, encoded = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "basic":
        try:
            client_id, _, secret = base64.b64decode(encoded).decode().partition(":")
        except ValueError:
            return "", ""
        return unquote(client_id), unquote(secret)
    return form.get("client_id", ""), form.get("client_secret", "")


# The people of the tests and the playground: one workspace, two people.
TEAM_ID = "T0WELT"
ALICE = Person("Alice", "UALICE", TEAM_ID)
BOB = Person("Bob", "UBOB", TEAM_ID)


def start_slack_openid(
    people: tuple[Person, ...] = (ALICE, BOB),
    key: RSAKey | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
) -> tuple[SlackOpenId, ThreadingHTTPServer]:
    """The issuer's state, and its server on a port the OS chose; a key is made unless given.

    Making a 2048-bit key takes a moment: tests that start many issuers pass one.
    """
    state = SlackOpenId(people=list(people), published_key=key or new_signing_key())
    state.url, server = serve(state.answer, host, port)
    return state, server
