"""The model provider's API key on AgentCore: in AgentCore Identity, fetched with a request's token.

Deployed, an Anthropic or OpenAI key is in none of the code, the zip, the
image or the runtime's environment (AgentCore shows a runtime's variables
in plain text to anyone who may read its configuration). The stack creates
an API-key credential provider in AgentCore Identity's token vault from a
secret you put in once (`make api-key`), and names it in
MODEL_API_KEY_PROVIDER. Identity gives the key only to a request that
carries a workload access token: AgentCore mints one for each request
invoked on behalf of a user, as Welt's InvokeAgentRuntimeForUser is, and
hands it to the container in the `WorkloadAccessToken` header.

So the key is fetched on the first request that needs it, with that
request's token, and kept in the process; never at import or in /warmup,
which run before AgentCore V2 takes the snapshot that every instance is
restored from (and have no token to fetch with). Requests that need it at
the same moment wait for one fetch. A request that comes without a token
is refused even once the key is kept, so a caller that cannot fetch the
key fails the same way in every process, not only in a new one.

When the key is rotated (`make api-key`, then `make deploy`), a process
keeps the key it fetched until it ends (AgentCore ends an idle session's
process after 15 minutes, any after 8 hours). If the provider refuses that
key first, the process forgets it (`forget`), and the next request
fetches the new one. Only the refused key is forgotten: a run that started
with the old key can be refused after another request fetched the new
one, which must stay.

Not bedrock_agentcore's `requires_api_key`: it builds its client when it
decorates, at import for a module-level function, and without a token it
creates a workload identity of its own. Nor `IdentityClient.get_api_key`,
which is declared async but makes its blocking boto3 call on the event loop.
Both call what this calls: bedrock-agentcore's GetResourceApiKey.
"""

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

from bedrock_agentcore.runtime.models import ACCESS_TOKEN_HEADER

from ..platform.aws_errors import aws_reason, from_aws_client
from ..platform.aws_session import AwsSession
from ..platform.logs import hide_in_logs

if TYPE_CHECKING:
    from boto3 import Session

# The headers bedrock-agentcore reads the workload access token from, in its
# order: its IDENTITY_WAT_HEADER (newer releases only, so named here) and
# ACCESS_TOKEN_HEADER, the one AgentCore Runtime sends.
WORKLOAD_TOKEN_HEADERS = ("X-Amz-Bedrock-AgentCore-Identity-WAT", ACCESS_TOKEN_HEADER)

# What each of Identity's refusals means for whoever runs the agent.
_WHAT_TO_FIX = {
    "AccessDeniedException": (
        "the runtime's role may not read it: the stack grants bedrock-agentcore:GetResourceApiKey "
        "on this provider and secretsmanager:GetSecretValue on its secret; deploy again "
        "(make deploy) if the role was changed by hand"
    ),
    "ResourceNotFoundException": (
        "the provider does not exist: store the key with `make api-key ENV=<env>` and deploy "
        "again (make deploy ENV=<env>)"
    ),
    "ThrottlingException": "AgentCore Identity is throttling this account: try again in a moment",
    "UnauthorizedException": (
        "Identity refused this request's workload access token: it is AgentCore's, per "
        "request; if this repeats, check that Welt invokes the runtime for a user"
    ),
}


class ApiKeyUnavailable(Exception):
    """The model's key could not be had for this request; the message says what to fix, in one line.

    Not a bug and not an outage of the model, so it is logged without a traceback.
    """


def workload_token_of(headers: Mapping[str, str] | None) -> str | None:
    """The request's workload access token, as bedrock-agentcore reads it; None if it has none."""
    if headers is None:
        return None
    for name in WORKLOAD_TOKEN_HEADERS:
        token = headers.get(name)
        if token:
            return token
    return None


class IdentityApiKey:
    """The key behind one API-key credential provider, fetched once per process.

    The client is made from the app's session at the first fetch.
    """

    def __init__(self, provider_name: str, aws: AwsSession | None = None) -> None:
        self.provider_name = provider_name
        self.aws = aws or AwsSession()
        self._key: str | None = None
        self._fetching: asyncio.Lock | None = None

    @property
    def session(self) -> "Session":
        """The session the key is fetched with, whose calls tests record."""
        return self.aws.session

    @property
    def key(self) -> str | None:
        """The key this process holds, or None before the first fetch (and after `forget`)."""
        return self._key

    async def fetch(self, workload_token: str | None) -> str:
        """The key: the one kept, else Identity's for this token. ApiKeyUnavailable says why not."""
        if not workload_token:
            raise self._unavailable(
                "this request carried no workload access token (the WorkloadAccessToken header). "
                "AgentCore sends one when the runtime is invoked on behalf of a user: check that "
                "Welt's role has WeltPolicyArn (bedrock-agentcore:InvokeAgentRuntimeForUser) and "
                "that nothing else invokes the runtime"
            )
        if self._key is None:
            self._fetching = self._fetching or asyncio.Lock()
            async with self._fetching:
                if self._key is None:
                    self._key = await asyncio.to_thread(self._read, workload_token)
        return self._key

    def forget(self, refused: str | None) -> None:
        """Drop the key the model provider refused, so that the next request fetches another.

        Nothing is dropped when the key held is no longer the refused one:
        a newer key, fetched meanwhile, is the one to keep.
        """
        if refused is not None and self._key == refused:
            self._key = None

    def _read(self, workload_token: str) -> str:
        from botocore.config import Config

        config = Config(connect_timeout=5, read_timeout=10, user_agent_extra="welt-agent-model-key")
        client = self.aws.client("bedrock-agentcore", config)
        try:
            answer = client.get_resource_api_key(
                resourceCredentialProviderName=self.provider_name,
                workloadIdentityToken=workload_token,
            )
        except Exception as failure:
            if not from_aws_client(failure):
                raise
            code, reason = aws_reason(failure)
            fix = _WHAT_TO_FIX.get(code)
            raise self._unavailable(f"{reason}; {fix}" if fix else reason) from failure
        finally:
            client.close()  # fetched once per process: nothing is left open
        key = answer.get("apiKey")
        if not isinstance(key, str) or not key:
            raise self._unavailable("Identity answered without a key")
        hide_in_logs(key)
        return key

    def _unavailable(self, cause: str) -> ApiKeyUnavailable:
        return ApiKeyUnavailable(
            f"The model's API key (AgentCore Identity provider {self.provider_name}) could not "
            f"be fetched: {cause}. Nothing was changed: send the message again once that is "
            "fixed; a question waiting in this thread can still be answered."
        )
