"""The model, built in one place.

Nothing else in the package knows which model or provider is in use, so
switching models is a change of environment (MODEL_PROVIDER, MODEL_ID) and
tests can hand the agent a scripted model instead. Settings are read when
the model is built, and checked at start-up, so a missing key stops the
server before the first Slack thread rather than failing inside it. Your
options for each provider (temperature, max_tokens, ...) are in
yours/model_options.py.
"""

import logging
import os
from collections.abc import Mapping
from functools import cache
from importlib.util import find_spec

from strands.models import Model

from .settings import DEFAULT_MODEL_ID, DEFAULT_MODEL_PROVIDER
from .yours.model_options import MODEL_OPTIONS

logger = logging.getLogger(__name__)

# provider: (the module its Strands extra installs, the variables it needs)
PROVIDERS = {
    "bedrock": ("boto3", ()),
    "anthropic": ("anthropic", ("ANTHROPIC_API_KEY", "MODEL_ID")),
    "openai": ("openai", ("OPENAI_API_KEY", "MODEL_ID")),
    "rehearsal": (None, ()),
}

# Anthropic's API needs a ceiling on each reply; MODEL_OPTIONS may set another.
ANTHROPIC_MAX_TOKENS = 4096


def model_settings(env: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The provider and model id in force: the environment over the answers."""
    return {
        "MODEL_PROVIDER": env.get("MODEL_PROVIDER", DEFAULT_MODEL_PROVIDER),
        "MODEL_ID": env.get("MODEL_ID", DEFAULT_MODEL_ID),
    }


def check_model_settings(env: Mapping[str, str] = os.environ) -> None:
    """Fail with a message that names what is missing; warn loudly in rehearsal."""
    provider = model_settings(env)["MODEL_PROVIDER"]
    if provider not in PROVIDERS:
        known = ", ".join(PROVIDERS)
        raise ValueError(f"MODEL_PROVIDER must be one of {known}, not {provider!r}")
    module, required = PROVIDERS[provider]
    values = {**env, **model_settings(env)}
    missing = [name for name in required if not values.get(name)]
    if missing:
        raise ValueError(
            f"MODEL_PROVIDER={provider} needs {', '.join(missing)} in the environment "
            "(see .env.example)"
        )
    if module and find_spec(module) is None:
        raise ValueError(
            f"MODEL_PROVIDER={provider} needs its Strands extra: "
            f"uv add 'strands-agents[{provider}]'"
        )
    if provider == "rehearsal":
        logger.warning("REHEARSAL MODE: no model is in use; every reply is scripted.")


def build_model(env: Mapping[str, str] = os.environ) -> Model:
    """The model the settings name, with your options. Imports only the chosen provider's client."""
    settings = model_settings(env)
    provider, model_id = settings["MODEL_PROVIDER"], settings["MODEL_ID"]
    if provider == "rehearsal":
        from .rehearsal import RehearsalModel

        return RehearsalModel()
    options = dict(MODEL_OPTIONS.get(provider, {}))
    if model_id:  # empty with Bedrock: the Strands default model
        options["model_id"] = model_id
    if provider == "anthropic":
        from strands.models.anthropic import AnthropicModel

        options.setdefault("max_tokens", ANTHROPIC_MAX_TOKENS)
        return AnthropicModel(client_args={"api_key": env["ANTHROPIC_API_KEY"]}, **options)
    if provider == "openai":
        from strands.models.openai import OpenAIModel

        client_args = {"api_key": env["OPENAI_API_KEY"]}
        if env.get("OPENAI_BASE_URL"):
            client_args["base_url"] = env["OPENAI_BASE_URL"]
        return OpenAIModel(client_args=client_args, **options)

    from strands.models.bedrock import BedrockModel

    return BedrockModel(**options)


@cache
def shared_model() -> Model:
    """The model every thread of this process uses, built on the first request.

    A model holds a client (for Bedrock, a boto3 client that costs about a
    tenth of a second to build); building it per turn pays that on every
    message. The model keeps no conversation state, so one serves all threads.
    """
    return build_model()
