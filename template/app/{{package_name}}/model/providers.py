"""The model, built in one place.

Nothing else in the package knows which model or provider is in use, so
switching models is a change of environment (MODEL_PROVIDER, MODEL_ID) and
tests can hand the agent a scripted model instead. The provider is checked
when the app is built, so a missing extra stops the server before the
first Slack thread rather than failing inside it; the model itself is built
on the first request that needs it. Your options for each provider
(temperature, max_tokens, ...) are in yours/model_options.py.
"""

import logging
import threading
from collections.abc import AsyncGenerator, Callable, Mapping
from importlib import import_module
from importlib.util import find_spec
from typing import Any

from strands.models import BedrockModel, Model
from strands.types.streaming import StreamEvent

from ..platform.aws_errors import SignInNeeded, sign_in_reason
from ..platform.aws_session import AwsSession
from ..settings import ConfigurationError, Settings
from .api_key import ApiKeyUnavailable, IdentityApiKey

logger = logging.getLogger(__name__)

# provider -> the module its Strands extra installs
EXTRA_MODULES = {"bedrock": "boto3", "anthropic": "anthropic", "openai": "openai"}

# provider -> the Strands model module of a provider whose key may come from
# AgentCore Identity (model/api_key.py)
KEYED_PROVIDERS = {
    "anthropic": "strands.models.anthropic",
    "openai": "strands.models.openai",
}

# Anthropic's API needs a ceiling on each reply; MODEL_OPTIONS may set another.
ANTHROPIC_MAX_TOKENS = 4096

ModelOptions = Mapping[str, Mapping[str, Any]]


class MissingExtra(ConfigurationError):
    """The provider's Strands extra is not installed."""


def check_provider(settings: Settings) -> None:
    """Fail with a message that names what is missing; warn loudly in rehearsal."""
    module = EXTRA_MODULES.get(settings.model_provider)
    if module and find_spec(module) is None:
        raise MissingExtra(
            f"MODEL_PROVIDER={settings.model_provider} needs its Strands extra: "
            f"uv add 'strands-agents[{settings.model_provider}]'"
        )
    if settings.model_provider == "rehearsal":
        logger.warning("REHEARSAL MODE: no model is in use; every reply is scripted.")


def build_model(
    settings: Settings,
    options: ModelOptions,
    api_key: str | None = None,
    aws: AwsSession | None = None,
) -> Model:
    """The model the settings name, with your options. Imports only the chosen provider's client.

    api_key, when given, is the key AgentCore Identity gave this process
    (model/api_key.py); otherwise the settings' key, from the environment.
    Bedrock's client comes from the app's AWS session, unless your options
    name a region or a session of their own.
    """
    provider, model_id = settings.model_provider, settings.model_id
    if provider == "rehearsal":
        from .rehearsal import RehearsalModel

        return RehearsalModel()
    chosen = dict(options.get(provider, {}))
    if model_id:  # empty with Bedrock: the Strands default model
        chosen["model_id"] = model_id
    if provider == "anthropic":
        from strands.models.anthropic import AnthropicModel

        chosen.setdefault("max_tokens", ANTHROPIC_MAX_TOKENS)
        key = api_key or settings.anthropic_api_key
        return AnthropicModel(client_args={"api_key": key}, **chosen)
    if provider == "openai":
        from strands.models.openai import OpenAIModel

        client_args = {"api_key": api_key or settings.openai_api_key}
        if settings.openai_base_url:
            client_args["base_url"] = settings.openai_base_url
        return OpenAIModel(client_args=client_args, **chosen)

    if aws is None or "region_name" in chosen or "boto_session" in chosen:
        return SigningBedrockModel(**chosen)
    with aws.making_clients() as session:
        return SigningBedrockModel(boto_session=session, **chosen)


# What a person running the agent on their machine does about credentials
# AWS's client cannot sign with.
SIGN_IN = (
    "Sign in to AWS (`aws sso login`, or set AWS_PROFILE to a profile of yours) and send "
    "the message again, or run `make rehearse` to try the agent with a scripted model."
)


class SigningBedrockModel(BedrockModel):
    """Bedrock, whose requests AWS's client cannot sign end in SignInNeeded, said in one line.

    botocore raises NoCredentialsError (or ProfileNotFound, or an expired
    token's error) from deep inside the request, and as it was the thread
    read "The agent failed: NoCredentialsError" over forty frames of log,
    where all there is to do is to sign in. Strands imports Bedrock's model
    in any case (its default), so this costs no start-up.
    """

    def __init__(self, **config: Any) -> None:
        try:
            super().__init__(**config)  # reads the profile: an unknown one fails here
        except Exception as failure:
            _raise_sign_in_needed(failure)
            raise

    async def stream(self, *args: Any, **kwargs: Any) -> AsyncGenerator[StreamEvent]:
        try:
            async for event in super().stream(*args, **kwargs):
                yield event
        except Exception as failure:
            _raise_sign_in_needed(failure)
            raise


def _raise_sign_in_needed(failure: Exception) -> None:
    reason = sign_in_reason(failure)
    if reason is not None:
        raise SignInNeeded(f"Bedrock cannot be called: {reason}. {SIGN_IN}") from failure


def shared_model(
    settings: Settings,
    options: ModelOptions,
    api_key: IdentityApiKey | None = None,
    aws: AwsSession | None = None,
) -> Callable[[], Model]:
    """The model every thread of this process uses, built when it is first asked for.

    A model holds a client (for Bedrock, a boto3 client), and building it
    per turn would build a client for every message. The model keeps no
    conversation state, so one serves all threads. With a key from AgentCore
    Identity, it is built with the key the request fetched before asking
    (turns/conversations.py), and built again if the key changed since.
    """
    built: list[tuple[str | None, Model]] = []
    building = threading.Lock()

    def model() -> Model:
        key = api_key.key if api_key is not None else None
        with building:
            if not built or (key is not None and built[0][0] != key):
                if api_key is not None and key is None:  # each request fetches it first
                    raise ApiKeyUnavailable("the model was asked for before its key was fetched")
                built[:] = [(key, build_model(settings, options, key, aws))]
            return built[0][1]

    return model


def warm_model(settings: Settings, model: Callable[[], Model]) -> Callable[[], object]:
    """What /warmup builds into AgentCore V2's snapshot: the model, or only its client's modules.

    A model whose key AgentCore Identity gives per request cannot be built
    before the snapshot (no request, no token, and no key may sit in it), so
    only the provider's modules are imported, the bulk of what building it costs.
    """
    if not settings.model_api_key_provider or settings.model_provider not in KEYED_PROVIDERS:
        return model
    module = KEYED_PROVIDERS[settings.model_provider]
    return lambda: import_module(module)


def model_api_key(settings: Settings, aws: AwsSession | None = None) -> IdentityApiKey | None:
    """The key's source on AgentCore (MODEL_API_KEY_PROVIDER), or None where .env gives the key."""
    if settings.model_api_key_provider and settings.model_provider in KEYED_PROVIDERS:
        return IdentityApiKey(settings.model_api_key_provider, aws)
    return None


def refused_key(failure: BaseException) -> bool:
    """Whether the model provider answered 401: the key is wrong, or was rotated away."""
    seen: BaseException | None = failure
    while seen is not None:
        if getattr(seen, "status_code", None) == 401:
            return True
        seen = seen.__cause__
    return False
