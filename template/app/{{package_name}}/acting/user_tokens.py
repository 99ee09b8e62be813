"""The OAuth token of the person who started a run, for a tool that acts as them in another service.

A tool that opens a GitHub issue "as Alice" must use Alice's own token, and
only while Alice is the one asking: a bot token would give everyone in the
channel everyone's rights. AgentCore Identity keeps each user's tokens in
its vault, keyed by the workload identity and the user id AgentCore mints a
request's workload access token for (the Slack user Welt verified), and
hands them out only to a request carrying that token. So:

- The token is always the run's starter's (`STARTED_BY`), never that of
  whoever answered one of its questions. Welt resumes a run with the
  identity of whoever answered; when that is not the starter, the tool
  first asks a question only the starter may answer ("continue as you?"),
  so the request that resumes it carries the starter's identity and token.
- It is fetched on every call, with the current request's workload token
  (`Answering.workload_token`, carried in the invocation state and never
  stored), and never kept: not at import, not in /warmup (both run before
  AgentCore V2's snapshot, with no request and no token), not in the
  process, not in agent.state, which is stored with the run. Only a digest
  of a token the service refused is kept, to tell "still the refused one".
- Without consent, Identity answers with an authorization URL and a session.
  The agent seals a consent state (consent_link.py: who, which session,
  until when) into a link to the session-binding endpoint, which signs the
  browser in with Slack and completes the session only for that very
  user; the thread gets a question only the starter may answer: the link,
  Done and Cancel. Done fetches again; still nothing, it says so and asks
  again under a new name. Cancel is a denial the model sees as one.
- A token the service refuses (`refused`, on a 401) starts consent again,
  with forceAuthentication.

Strands runs an interrupted tool again from its first line on every resume,
so where each call stands (which question is open, how many were asked) is
kept in the agent state under the call's toolUseId, like the gate's answers.
Not bedrock_agentcore's `requires_access_token`: it builds its client at
import and polls until consent, which does not fit a Slack question that
may be answered hours later, in another process.
"""

import hashlib
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

from welt_io_strands import interrupt_reason

from ..gate.answerers import ANSWERING, STARTED_BY, STARTER, Answering, answer_to
from ..gate.audit import fingerprint
from ..gate.interrupt_names import interrupt_name
from ..gate.tool_errors import DeniedByHuman
from ..identity import SlackUser
from ..platform.aws_errors import aws_reason, from_aws_client
from ..platform.aws_session import AwsSession
from ..platform.logs import hide_in_logs
from ..runs.seal import FileKey, KeyUse, SealKey, SecretKey
from ..runs.storage import StoreUnavailable
from ..settings import USER_TOKEN_PROVIDER, ConfigurationError, Settings
from .consent_link import CALLBACK_PATH, CONNECT_PATH, CONSENT_LIFETIME_SECONDS, ConsentState

if TYPE_CHECKING:
    from strands import ToolContext

logger = logging.getLogger(__name__)

# Where the app's UserTokens travel: in the invocation state, beside ANSWERING.
USER_TOKENS = "welt_user_tokens"

# The questions a call may ask; each asking adds the provider and its step.
CONSENT = interrupt_name("user-token-consent")
AS_STARTER = interrupt_name("user-token-as-starter")

# Agent-state keys of each call's progress: user_token:<toolUseId>:<provider>.
_PROGRESS = "user_token:"

CONSENT_KEY = KeyUse(
    "The consent links' key",
    "seals consent links",
    "can seal a consent link the session-binding endpoint would finish for anyone",
    "links already shown in Slack stop working; Done gives new ones",
)

# What each of Identity's refusals means for whoever runs the agent.
_WHAT_TO_FIX = {
    "AccessDeniedException": (
        "the runtime's role may not fetch it: the stack grants "
        "bedrock-agentcore:GetResourceOauth2Token on this provider and the workload identity; "
        "deploy again (make deploy) if the role was changed by hand"
    ),
    "ResourceNotFoundException": (
        "the provider does not exist: declare it in deploy/environments.toml and deploy again"
    ),
    "ThrottlingException": "AgentCore Identity is throttling this account: try again in a moment",
    "UnauthorizedException": (
        "Identity refused this request's workload access token: it is AgentCore's, per "
        "request; if this repeats, check that Welt invokes the runtime for a user"
    ),
    "ValidationException": (
        "check that CONSENT_ENDPOINT_URL/callback is among the workload identity's allowed "
        "return URLs (the deployment registers it)"
    ),
}


class UserTokenUnavailable(Exception):
    """A user's token could not be had, for a reason only whoever runs the agent can fix.

    One line that says what to fix; the model sees it as the tool's error.
    """


class ConsentDeclined(DeniedByHuman):
    """The starter pressed Cancel: the model sees a denial, not a failure to retry."""


@dataclass(frozen=True)
class Fetched:
    """What Identity answered: a token, or the consent to ask for."""

    access_token: str | None = field(default=None, repr=False)
    authorization_url: str | None = None
    session_uri: str | None = None


class UserTokens:
    """What fetching any user's token needs, one per app: the settings, AWS, the consent key.

    Built with the app, and reaching a tool through the invocation state.
    It holds no token of anybody's; it reads the consent key once, as the
    run store reads its seal key.
    """

    def __init__(self, settings: Settings, aws: AwsSession | None = None) -> None:
        self.settings = settings
        self.aws = aws or AwsSession()
        self._providers = dict(settings.user_token_providers)
        self._api_urls = dict(settings.user_token_api_urls)
        self._key = open_consent_key(settings, self.aws)
        self._client: Any = None  # Identity's, made at the first fetch: never at import
        self._making = threading.Lock()

    def provider_name(self, token: "UserToken") -> str:
        """The Identity credential provider behind a declared provider; deployed, it must be set."""
        named = self._providers.get(token.provider)
        if named:
            return named
        if self.settings.on_agentcore:
            raise token.unavailable(
                f"USER_TOKEN_PROVIDERS names no credential provider for {token.provider}: the "
                "deployment creates one for each provider deploy/environments.toml declares; "
                "declare it there and deploy again (make deploy)"
            )
        return token.provider

    def api_url(self, token: "UserToken") -> str:
        return self._api_urls.get(token.provider, token.api_url)

    def consent_key(self, token: "UserToken") -> bytes:
        if self._key is None:
            raise token.unavailable(
                "CONSENT_KEY_SECRET is not set: on AgentCore consent links are sealed with the "
                "secret the deployment creates and names in CONSENT_KEY_SECRET"
            )
        try:
            return self._key.key_now()
        except StoreUnavailable as unreadable:
            raise token.unavailable(str(unreadable).rstrip(".")) from None

    def return_url(self, token: "UserToken") -> str:
        if not self.settings.consent_endpoint_url:
            raise token.unavailable(
                "CONSENT_ENDPOINT_URL is not set: it is the base URL of the session-binding "
                "endpoint that finishes a person's consent (the deployment sets it; locally, "
                "the playground runs one)"
            )
        return self.settings.consent_endpoint_url + CALLBACK_PATH

    def fetch(self, token: "UserToken", workload_token: str, *, force: bool) -> Fetched:
        """Identity's answer for the user this workload token was minted for."""
        request: dict[str, Any] = {
            "workloadIdentityToken": workload_token,
            "resourceCredentialProviderName": self.provider_name(token),
            "scopes": list(token.scopes),
            "oauth2Flow": "USER_FEDERATION",
            "resourceOauth2ReturnUrl": self.return_url(token),
        }
        if force:
            request["forceAuthentication"] = True
        try:
            answer = self._identity().get_resource_oauth2_token(**request)
        except Exception as failure:
            if not from_aws_client(failure):
                raise
            code, reason = aws_reason(failure)
            fix = _WHAT_TO_FIX.get(code)
            raise token.unavailable(f"{reason}; {fix}" if fix else reason) from failure
        access_token = answer.get("accessToken")
        if isinstance(access_token, str) and access_token:
            hide_in_logs(access_token)
            return Fetched(access_token=access_token)
        url, session = answer.get("authorizationUrl"), answer.get("sessionUri")
        if isinstance(url, str) and url and isinstance(session, str) and session:
            return Fetched(authorization_url=url, session_uri=session)
        raise token.unavailable("Identity answered with neither a token nor a consent link")

    def _identity(self) -> Any:
        """Identity's client, one per app: it holds nobody's token, each call says whose."""
        with self._making:
            if self._client is None:
                from botocore.config import Config

                config = Config(
                    connect_timeout=5, read_timeout=10, user_agent_extra="welt-agent-user-token"
                )
                self._client = self.aws.client("bedrock-agentcore", config)
            return self._client


def open_consent_key(settings: Settings, aws: AwsSession | None = None) -> SealKey | None:
    """The secret CONSENT_KEY_SECRET names, else this machine's key file; None on AgentCore without.

    A key file in a microVM would be a key nobody else has: the endpoint
    could open none of its links. So deployed, only the secret will do,
    and a tool that needs it says so.
    """
    if settings.consent_key_secret:
        return SecretKey(settings.consent_key_secret, aws, CONSENT_KEY)
    if settings.on_agentcore:
        return None
    return FileKey(settings.consent_key_file, CONSENT_KEY)


class UserToken:
    """A provider's token of the run's starter, declared once in yours/ and used by a tool.

        GITHUB = UserToken("github", scopes=("repo",), service="GitHub")

        @tool(context=True)
        def my_open_pull_requests(tool_context: ToolContext) -> str:
            token = GITHUB.of_starter(tool_context)
            ...  # call GitHub with it; on a 401: GITHUB.refused(tool_context)

    Call it from a tool declared with `context=True` and defined with `def`
    (Strands runs it in a worker thread): it calls Identity, and may ask.
    """

    def __init__(
        self, provider: str, scopes: Sequence[str] = (), service: str = "", api_url: str = ""
    ) -> None:
        if not USER_TOKEN_PROVIDER.fullmatch(provider):
            raise ConfigurationError(
                f"UserToken's provider must be lowercase letters, digits, - or _ (up to 64, "
                f"a letter first), as USER_TOKEN_PROVIDERS names it, not {provider!r}"
            )
        if isinstance(scopes, str):
            raise ConfigurationError(f"UserToken's scopes are a tuple of scopes, not {scopes!r}")
        self.provider = provider
        self.scopes = tuple(scopes)
        self.service = service or provider
        self.api_url = api_url

    def of_starter(self, tool_context: "ToolContext") -> str:
        """The starter's token, fetched now; asks the starter first when it must.

        Raises an interrupt (the run stops on the question), ConsentDeclined
        (Cancel), or UserTokenUnavailable (one line: what to fix).
        """
        return _Call(self, tool_context).fetched()

    def refused(self, tool_context: "ToolContext") -> NoReturn:
        """The service refused the token `of_starter` gave (a 401): the starter connects again.

        Consent starts afresh (forceAuthentication); once it is given, the
        tool runs again from its first line and `of_starter` has the new token.
        """
        _Call(self, tool_context).refused()

    def api(self, tool_context: "ToolContext") -> str:
        """The provider's API base URL: USER_TOKEN_API_URLS's for it, else the one declared."""
        tokens = tool_context.invocation_state.get(USER_TOKENS)
        return tokens.api_url(self) if isinstance(tokens, UserTokens) else self.api_url

    def unavailable(self, cause: str) -> UserTokenUnavailable:
        """The one-line error for a token that cannot be had; also a warning for whoever runs it."""
        error = UserTokenUnavailable(
            f"The {self.service} token of the person who started this run (provider "
            f"{self.provider}) could not be had: {cause}."
        )
        logger.warning("%s", error)
        return error


def forget_progress(agent: Any) -> None:
    """Drop where the run's calls stood: a new turn's calls have ids of their own."""
    kept = agent.state.get() or {}
    for key in [key for key in kept if key.startswith(_PROGRESS)]:
        agent.state.delete(key)


def _digest(token: str) -> str:
    """A digest of a token, to tell it again: never the token, which no stored run holds."""
    return hashlib.sha256(token.encode()).hexdigest()[:32]


class _Call:
    """One pass of one tool call through its token: what it has been asked, what it asks next."""

    def __init__(self, token: UserToken, tool_context: "ToolContext") -> None:
        self.wanted = token
        self.context = tool_context
        self.state = tool_context.agent.state
        self.key = f"{_PROGRESS}{tool_context.tool_use['toolUseId']}:{token.provider}"
        tokens = tool_context.invocation_state.get(USER_TOKENS)
        if not isinstance(tokens, UserTokens):
            raise token.unavailable("the tool ran outside the agent's app, which brings them")
        self.tokens = tokens
        self.answering: Answering | None = tool_context.invocation_state.get(ANSWERING)
        starter = self.state.get(STARTED_BY)
        if not isinstance(starter, str):
            raise token.unavailable(self._nobody_started())
        self.starter = SlackUser(starter)

    def fetched(self) -> str:
        """The token, once every question this call asked has the starter's answer."""
        progress = self._progress()
        while True:
            progress = self._answered(progress)
            if not self._sent_by_starter():
                progress = self._asking(progress, AS_STARTER, self._as_starter_reason())
                continue
            fetched = self._fetch(force=bool(progress.get("force")))
            if fetched.access_token is not None and (
                _digest(fetched.access_token) == progress.get("refused")
            ):
                # The one the service refused, still in the vault: no consent was given.
                fetched = self._fetch(force=True)
            if fetched.access_token is not None:
                self._save({"step": progress["step"], "last": _digest(fetched.access_token)})
                return fetched.access_token
            progress = self._asking(progress, CONSENT, self._consent_reason(fetched, progress))

    def refused(self) -> NoReturn:
        """Ask for consent afresh; the token the service refused is never handed out again."""
        progress = self._progress()
        progress = {**progress, "refused": progress.get("last"), "force": True, "after": "refused"}
        self._save(progress)
        self.fetched()
        # A token, though Identity was told to ask for consent afresh.
        raise self.wanted.unavailable(
            f"{self.wanted.service} refused the token, and Identity gave a token again instead "
            "of asking for consent (forceAuthentication)"
        )

    def _answered(self, progress: dict[str, Any]) -> dict[str, Any]:
        """Progress once the open question of this call, if any, has the starter's answer.

        Raises the interrupt while it has none (the run stops on it), and
        ConsentDeclined for Cancel.
        """
        asking = progress.get("asking")
        if asking is None:
            return progress
        shown = fingerprint(self.context.tool_use.get("input"))
        answer, _ = answer_to(
            self.context, asking["name"], asking["reason"], STARTER, fingerprint=shown,
            yes_or_no=True,
        )  # fmt: skip
        if answer is not True:
            raise ConsentDeclined(self._declined(asking["kind"]))
        step = progress["step"] + 1
        answered = {**progress, "asking": None, "step": step, "after": asking["kind"]}
        if asking["kind"] == "consent":
            answered["force"] = False  # consent was asked for afresh: now fetch what it gave
        self._save(answered)
        return answered

    def _asking(self, progress: dict[str, Any], question: str, reason: dict) -> dict[str, Any]:
        kind = "consent" if question == CONSENT else "as-starter"
        name = f"{question}-{self.wanted.provider}-{progress['step']}"
        asking = {**progress, "asking": {"kind": kind, "name": name, "reason": reason}}
        self._save(asking)
        return asking

    def _fetch(self, *, force: bool) -> Fetched:
        return self.tokens.fetch(self.wanted, self._workload_token(), force=force)

    def _workload_token(self) -> str:
        """The request's workload token; off AgentCore, the local stand-in's name for the user."""
        sent = self.answering.workload_token if self.answering else None
        if sent:
            return sent
        if not self.tokens.settings.on_agentcore:
            return f"local:{self.starter.id}"  # only a local Identity stand-in takes it
        raise self.wanted.unavailable(
            "this request carried no workload access token (the WorkloadAccessToken header). "
            "AgentCore sends one when the runtime is invoked on behalf of a user: check that "
            "Welt's role has WeltPolicyArn (bedrock-agentcore:InvokeAgentRuntimeForUser)"
        )

    def _sent_by_starter(self) -> bool:
        sender = self.answering.sender if self.answering else None
        return sender is not None and sender.id == self.starter.id

    def _consent_reason(self, fetched: Fetched, progress: dict[str, Any]) -> dict[str, Any]:
        assert fetched.session_uri is not None and fetched.authorization_url is not None
        service = self.wanted.service
        state = ConsentState.new(
            self.starter.id,
            self.wanted.provider,
            service,
            fetched.session_uri,
            fetched.authorization_url,
            time.time(),
        )
        link = self.tokens.settings.consent_endpoint_url + CONNECT_PATH
        link += f"?state={state.sealed(self.tokens.consent_key(self.wanted))}"
        minutes = CONSENT_LIFETIME_SECONDS // 60
        # A Markdown link, as Welt's questions are Markdown: the long sealed
        # state stays out of sight (base64url holds no parenthesis or space).
        before = {
            "consent": f"_{service} is not connected yet: the link was not finished._\n\n",
            "refused": f"_{service} refused the token it had for you: connect it again._\n\n",
        }.get(progress.get("after") or "", "")
        message = (
            f"{before}[Connect {service} as you]({link})\n\n"
            f"{self.starter.mention}, open the link, sign in with Slack as yourself and allow "
            f"access, then press Done. Only you can finish it, within {minutes} minutes; "
            "after that, Done gives you a new link."
        )
        return interrupt_reason(
            message,
            approve={"label": "Done", "style": "primary"},
            reject={"label": "Cancel"},
        )

    def _as_starter_reason(self) -> dict[str, Any]:
        sender = self.answering.sender if self.answering else None
        who = sender.mention if sender else "someone Welt did not name"
        service = self.wanted.service
        message = (
            f"{self.starter.mention}, continue as you on {service}? The last answer came from "
            f"{who}, and this acts on {service} only as the person who started it."
        )
        return interrupt_reason(
            message,
            approve={"label": "Done", "style": "primary"},
            reject={"label": "Cancel"},
        )

    def _declined(self, kind: str) -> str:
        service, who = self.wanted.service, self.starter.mention
        if kind == "as-starter":
            return f"{who} did not continue as themselves on {service}: nothing was done as them."
        return (
            f"{who} did not connect {service}: nothing was done as them. Do not try again "
            f"unless they ask; this needs their own {service} account."
        )

    def _nobody_started(self) -> str:
        if self.tokens.settings.on_agentcore:
            return (
                "no verified Slack user started this run, and a tool acts only as the person who "
                "started it: Welt must invoke the agent with runtimeUserId "
                "(bedrock-agentcore:InvokeAgentRuntimeForUser)"
            )
        return (
            "no Slack user started this run, and a tool acts only as the person who started it: "
            "Welt's local mode names nobody, so set LOCAL_USER_ID (slack:<team>:<user>)"
        )

    def _progress(self) -> dict[str, Any]:
        kept = self.state.get(self.key)
        return dict(kept) if isinstance(kept, dict) else {"step": 0}

    def _save(self, progress: dict[str, Any]) -> None:
        self.state.set(self.key, progress)
