"""The session-binding endpoint: Identity's consent completes only for the person the link names.

A consent link shown in a Slack thread can be opened by anyone who sees it
or is forwarded it. AgentCore Identity therefore sends the browser that
consented back to this endpoint, and completes nothing until the endpoint
calls CompleteResourceTokenAuth with a user id; this endpoint calls it
only with the id of the person the agent asked, and only after that
person signed in here with Sign in with Slack:

- GET /connect?state=S: S is the consent state the agent sealed
  (acting/consent_link.py): whose consent, which Identity session, until
  when. A state that does not open is refused. Otherwise the browser goes
  to Slack's sign-in, with a nonce kept in a short cookie of this browser.
- GET /signed-in?code&state=S: the code is exchanged and the ID token
  verified by authlib (the issuer's keys from its discovery document;
  iss, aud = this client, exp, and the nonce of this browser's cookie).
  The person signed in is `slack:<team_id>:<user_id>` of that token.
  Someone else: nothing is completed, an audit line, a 403 page naming who
  may finish. The person the link names: a sealed cookie binding this
  browser to that session and user, and on to the provider's consent.
- GET /callback?session_id=<sessionUri>: Identity's redirect after the
  consent. Only a browser holding the binding cookie for that very session
  gets further; the state is claimed once (used_states.py), so a replayed
  callback completes nothing; then CompleteResourceTokenAuth with the
  bound user's id.

Every refusal writes one audit line (logger `<package>.binding.audit`,
the fields as the agent's audit lines carry them) and shows a page that
says why and who may finish. Pages are plain HTML, every value escaped.
Cookies are HttpOnly, SameSite=Lax, and Secure with the `__Host-` prefix
whenever the endpoint is served over HTTPS (always, deployed).

`handler(event, context)` serves a Lambda function URL (payload 2.0); its
configuration is read from the environment on the first request and kept
(settings.py). It imports the standard library, boto3,
authlib and consent_link alone: the Lambda bundle holds nothing else.
"""

import html
import json
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from ..acting.consent_link import (
    CALLBACK_PATH,
    CONNECT_PATH,
    SIGNED_IN_PATH,
    ConsentState,
    StateRefused,
    seal,
    unseal,
)
from .settings import Config
from .used_states import StoreUnavailable

audit_log = logging.getLogger(f"{__name__.rpartition('.')[0]}.audit")
logger = logging.getLogger(__name__)

SIGN_IN_SECONDS = 600
BINDING_SECONDS = 600
SIGN_IN_PURPOSE = "sign-in"
BINDING_PURPOSE = "binding"
# The cookies' names; served over HTTPS, each gets the __Host- prefix (no
# Domain, Path=/, Secure: no other host or path can set or read it).
SIGN_IN_COOKIE = "welt_sign_in"
BINDING_COOKIE = "welt_binding"
TEAM_CLAIM = "https://slack.com/team_id"
USER_CLAIM = "https://slack.com/user_id"

_PAGE_HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
}


def _slack_sign_in(config: Config) -> Any:
    """authlib's OpenID Connect client for Slack: discovery, code exchange, ID-token checks."""
    from authlib.integrations.base_client import BaseApp, OAuth2Mixin, OpenIDMixin
    from authlib.integrations.requests_client import OAuth2Session

    class SlackSignIn(OAuth2Mixin, OpenIDMixin, BaseApp):
        client_cls = OAuth2Session

    return SlackSignIn(
        None,  # no web framework: the state lives in the link and the cookies
        name="slack",
        client_id=config.slack_client_id,
        client_secret=config.slack_client_secret,
        server_metadata_url=f"{config.slack_issuer}/.well-known/openid-configuration",
        client_kwargs={"scope": "openid", "default_timeout": 10},
    )


@dataclass(frozen=True)
class Refusal:
    """Why a request completes nothing: the step, the reason, whose link, who signed in."""

    step: str
    reason: str
    state: ConsentState | None = None
    signed_in: str | None = None
    session_uri: str | None = None
    status: int = 403


class Endpoint:
    """The endpoint's three steps, answering Lambda function URL events (payload 2.0)."""

    def __init__(
        self,
        config: Config,
        clock: Callable[[], float] = time.time,
        identity: Any = None,
    ) -> None:
        self.config = config
        self.clock = clock
        self._identity = identity  # a bedrock-agentcore client, made on first use
        self._slack: Any = None

    @property
    def identity(self) -> Any:
        if self._identity is None:
            import boto3
            from botocore.config import Config as ClientConfig

            self._identity = boto3.client(
                "bedrock-agentcore",
                config=ClientConfig(
                    connect_timeout=5, read_timeout=10, user_agent_extra="welt-consent"
                ),
            )
        return self._identity

    @property
    def slack(self) -> Any:
        if self._slack is None:
            self._slack = _slack_sign_in(self.config)
        return self._slack

    def handle(self, event: Mapping[str, Any]) -> dict[str, Any]:
        context = event.get("requestContext") or {}
        method = (context.get("http") or {}).get("method", "GET")
        path = event.get("rawPath") or "/"
        query = _query(event.get("rawQueryString") or "")
        base = self.config.public_url or f"https://{context.get('domainName', '')}"
        cookies = _cookies(event.get("cookies") or [], base)
        if method != "GET":
            return _page(405, "Not here", "This address answers links only.")
        if query is None:
            return self._refused(
                Refusal(path.strip("/"), "a parameter was given twice", status=400)
            )
        steps = {
            CONNECT_PATH: self._connect,
            SIGNED_IN_PATH: self._signed_in,
            CALLBACK_PATH: self._callback,
        }
        step = steps.get(path)
        if step is None:
            return _page(404, "Not here", "Nothing is served at this address.")
        try:
            return step(query, cookies, base)
        except StoreUnavailable as failure:
            logger.error("the store of used consent states is unavailable: %s", failure)
            return self._refused(
                Refusal("callback", f"the store is unavailable: {failure}", status=503)
            )

    # GET /connect?state=S

    def _connect(self, query: dict[str, str], cookies: dict[str, str], base: str) -> dict[str, Any]:
        state = self._open_state("connect", query.get("state", ""))
        if isinstance(state, Refusal):
            return self._refused(state)
        nonce = secrets.token_urlsafe(24)
        now = self.clock()
        sign_in = seal(
            SIGN_IN_PURPOSE,
            {"nonce": nonce, "for": state.nonce},
            self.config.consent_key,
            now + SIGN_IN_SECONDS,
        )
        try:
            found = self.slack.create_authorization_url(
                redirect_uri=f"{base}{SIGNED_IN_PATH}", state=query["state"], nonce=nonce
            )
        except Exception as failure:  # discovery: Slack unreachable, or not an OIDC issuer
            logger.error("Sign in with Slack is unavailable: %s", _one_line(failure))
            return _page(
                502,
                "Slack is unreachable",
                "Sign in with Slack could not be reached. Try the link again in a moment.",
            )
        return _redirect(found["url"], _cookie(SIGN_IN_COOKIE, sign_in, SIGN_IN_SECONDS, base))

    # GET /signed-in?code&state=S

    def _signed_in(
        self, query: dict[str, str], cookies: dict[str, str], base: str
    ) -> dict[str, Any]:
        state = self._open_state("signed-in", query.get("state", ""))
        if isinstance(state, Refusal):
            return self._refused(state)
        if "error" in query or "code" not in query:
            why = query.get("error", "no code")
            return self._refused(
                Refusal("signed-in", f"Slack sign-in did not finish: {why}", state, status=400)
            )
        try:
            started = unseal(
                SIGN_IN_PURPOSE,
                cookies.get(SIGN_IN_COOKIE, ""),
                self.config.consent_key,
                self.clock(),
            )
        except StateRefused as failure:
            return self._refused(
                Refusal(
                    "signed-in",
                    f"this browser did not start this sign-in ({failure.reason} sign-in cookie)",
                    state,
                )
            )
        if started.get("for") != state.nonce or not isinstance(started.get("nonce"), str):
            return self._refused(
                Refusal("signed-in", "this browser started a sign-in for another link", state)
            )
        try:
            token = self.slack.fetch_access_token(
                redirect_uri=f"{base}{SIGNED_IN_PATH}", code=query["code"]
            )
            claims = self.slack.parse_id_token(
                token,
                nonce=started["nonce"],
                claims_options={"iss": {"essential": True, "values": [self.config.slack_issuer]}},
            )
        except Exception as failure:  # authlib's, joserfc's or requests' refusal, whichever
            return self._refused(
                Refusal(
                    "signed-in",
                    f"the Slack sign-in could not be verified: {_one_line(failure)}",
                    state,
                )
            )
        team, user = (claims or {}).get(TEAM_CLAIM), (claims or {}).get(USER_CLAIM)
        if not isinstance(team, str) or not isinstance(user, str) or not team or not user:
            return self._refused(
                Refusal("signed-in", "the ID token names no Slack team and user", state)
            )
        signed_in = f"slack:{team}:{user}"
        if signed_in != state.user:
            return self._refused(
                Refusal(
                    "signed-in",
                    "signed in as someone other than the person who asked",
                    state,
                    signed_in,
                )
            )
        binding = seal(
            BINDING_PURPOSE,
            {
                "session_uri": state.session_uri,
                "user": state.user,
                "nonce": state.nonce,
                "provider": state.provider,
                "service": state.service,
            },
            self.config.consent_key,
            self.clock() + BINDING_SECONDS,
        )
        return _redirect(
            state.authorization_url,
            _cookie(BINDING_COOKIE, binding, BINDING_SECONDS, base),
            _cookie(SIGN_IN_COOKIE, "", 0, base),
        )

    # GET /callback?session_id=<sessionUri>

    def _callback(
        self, query: dict[str, str], cookies: dict[str, str], base: str
    ) -> dict[str, Any]:
        session_uri = query.get("session_id", "")
        if not cookies.get(BINDING_COOKIE):
            return self._refused(
                Refusal(
                    "callback",
                    "this browser did not sign in through the consent link (no binding cookie)",
                    session_uri=session_uri,
                )
            )
        try:
            bound = unseal(
                BINDING_PURPOSE, cookies[BINDING_COOKIE], self.config.consent_key, self.clock()
            )
        except StateRefused as failure:
            return self._refused(
                Refusal(
                    "callback", f"the binding cookie is {failure.reason}", session_uri=session_uri
                )
            )
        names = ("session_uri", "user", "nonce", "provider", "service")
        if not all(isinstance(bound.get(name), str) for name in names):
            return self._refused(
                Refusal("callback", "the binding cookie is malformed", session_uri=session_uri)
            )
        state = ConsentState(
            bound["user"],
            bound["provider"],
            bound["service"],
            bound["session_uri"],
            "",
            bound["nonce"],
            float(bound["exp"]),
        )
        if session_uri != state.session_uri:
            return self._refused(
                Refusal(
                    "callback",
                    "the callback is for another session than this browser signed in for",
                    state,
                    session_uri=session_uri,
                )
            )
        if not self.config.used_states.claim(state.nonce):
            return self._refused(
                Refusal(
                    "callback",
                    "replayed: this consent was already finished",
                    state,
                    session_uri=session_uri,
                )
            )
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.identity.complete_resource_token_auth(
                userIdentifier={"userId": state.user}, sessionUri=session_uri
            )
        except (ClientError, BotoCoreError) as failure:
            code = (
                failure.response.get("Error", {}).get("Code", "an error")
                if isinstance(failure, ClientError)
                else type(failure).__name__
            )
            return self._refused(
                Refusal(
                    "callback",
                    f"AgentCore Identity refused to complete it: {code}",
                    state,
                    session_uri=session_uri,
                    status=502,
                )
            )
        _audit("completed", "callback", state, session_uri, None, None)
        return _page(
            200,
            f"Connected {state.service}",
            f"{state.service} is connected as you. Go back to Slack and press Done.",
            cookies=(_cookie(BINDING_COOKIE, "", 0, base),),
        )

    def _open_state(self, step: str, text: str) -> ConsentState | Refusal:
        try:
            return ConsentState.opened(text, self.config.consent_key, self.clock())
        except StateRefused as failure:
            why = "expired: ask again in Slack" if failure.reason == "expired" else failure.reason
            return Refusal(step, f"the link's state is {why}")

    def _refused(self, refusal: Refusal) -> dict[str, Any]:
        state = refusal.state
        _audit(
            "refused", refusal.step, state, refusal.session_uri, refusal.signed_in, refusal.reason
        )
        lines = [f"Nothing was connected: {refusal.reason}."]
        if state is not None:
            lines.append(
                f"Only {_person(state.user)} may connect {state.service} with this link: "
                "they open it from Slack and sign in to Slack as themselves."
            )
        else:
            lines.append(
                "Only the person the agent asked may finish: they open the link from "
                "the Slack thread and sign in to Slack as themselves."
            )
        if refusal.signed_in is not None:
            lines.append(f"You are signed in to Slack as {_person(refusal.signed_in)}.")
        return _page(refusal.status, "This link cannot be finished here", *lines)


def _audit(
    outcome: str,
    step: str,
    state: ConsentState | None,
    session_uri: str | None,
    signed_in: str | None,
    reason: str | None,
) -> None:
    """One audit line: what happened at which step, whose consent, who was signed in, why."""
    fields: dict[str, object] = {
        "audit": outcome,
        "at": "consent",
        "step": step,
        "provider": state.provider if state else None,
        "sessionUri": session_uri or (state.session_uri if state else None),
        "mayFinish": state.user if state else None,
        "signedInAs": signed_in,
    }
    if reason is not None:
        fields["refusal"] = reason
    audit_log.info(
        "%s: consent %s at %s%s",
        outcome,
        f"for {state.user}" if state else "for someone unknown",
        step,
        f" ({reason})" if reason else "",
        extra={"fields": fields},
    )


def _person(user: str) -> str:
    """slack:T:U as a page says it: Slack user U (workspace T)."""
    parts = user.split(":")
    if len(parts) == 3 and parts[0] == "slack":
        return f"Slack user {parts[2]} (workspace {parts[1]})"
    return user


def _one_line(failure: BaseException) -> str:
    text = " ".join(str(failure).split())[:200]
    return f"{type(failure).__name__}: {text}" if text else type(failure).__name__


def _query(raw: str) -> dict[str, str] | None:
    """The query's parameters; None if one is given twice (which one would count is a guess)."""
    parsed = parse_qs(raw, keep_blank_values=True)
    if any(len(values) > 1 for values in parsed.values()):
        return None
    return {name: values[0] for name, values in parsed.items()}


def _cookie_name(name: str, base: str) -> str:
    return f"__Host-{name}" if base.startswith("https://") else name


def _cookies(sent: list[str], base: str) -> dict[str, str]:
    """The cookies a function URL event carries ("name=value" each), by their unprefixed names."""
    found: dict[str, str] = {}
    for each in sent:
        for pair in each.split(";"):
            name, _, value = pair.strip().partition("=")
            for ours in (SIGN_IN_COOKIE, BINDING_COOKIE):
                if name == _cookie_name(ours, base):
                    found[ours] = value
    return found


def _cookie(name: str, value: str, seconds: int, base: str) -> str:
    secure = base.startswith("https://")
    return (
        f"{_cookie_name(name, base)}={value}; Path=/; Max-Age={seconds}; HttpOnly; SameSite=Lax"
        + ("; Secure" if secure else "")
    )


def _redirect(location: str, *cookies: str) -> dict[str, Any]:
    return {
        "statusCode": 302,
        "headers": {**_PAGE_HEADERS, "Location": location},
        "cookies": list(cookies),
        "body": "",
        "isBase64Encoded": False,
    }


def _page(status: int, title: str, *lines: str, cookies: tuple[str, ...] = ()) -> dict[str, Any]:
    """A plain page: every value escaped."""
    text = "".join(f"<p>{html.escape(line)}</p>" for line in lines)
    body = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title></head>"
        "<body style='font-family: sans-serif; max-width: 40em; margin: 3em auto'>"
        f"<h1>{html.escape(title)}</h1>{text}</body></html>"
    )
    return {
        "statusCode": status,
        "headers": dict(_PAGE_HEADERS),
        "cookies": list(cookies),
        "body": body,
        "isBase64Encoded": False,
    }


_endpoint: list[Endpoint] = []


class _JsonLines(logging.Formatter):
    """One JSON object per line in CloudWatch Logs, an audit line's fields among its keys."""

    def format(self, record: logging.LogRecord) -> str:
        line = {"level": record.levelname, "logger": record.name, "message": record.getMessage()}
        return json.dumps({**line, **getattr(record, "fields", {})}, default=str)


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The Lambda function URL's entry point; the configuration is read on the first request."""
    if not _endpoint:
        logging.getLogger().setLevel(logging.INFO)
        for each in logging.getLogger().handlers:  # the Lambda runtime's own handler
            each.setFormatter(_JsonLines())
        _endpoint.append(Endpoint(Config.from_environment()))
    return _endpoint[0].handle(event)
