"""The model, built in one place.

Nothing else in the package knows which model or provider is in use, so
switching models is a change here (or the MODEL_ID variable) and tests can
hand the agent a scripted model instead.
"""

import logging

from strands.models import Model
from strands.models.bedrock import BedrockModel

from .settings import MODEL_ID, MODEL_PROVIDER

logger = logging.getLogger(__name__)


def build_model() -> Model:
    """The Bedrock model named by MODEL_ID (empty: the Strands default), or the rehearsal."""
    if MODEL_PROVIDER == "rehearsal":
        from .rehearsal import RehearsalModel

        return RehearsalModel()
    if MODEL_ID:
        return BedrockModel(model_id=MODEL_ID)
    return BedrockModel()


def check_model_settings() -> None:
    """Fail fast on an unknown provider, and say loudly when no real model is in use."""
    if MODEL_PROVIDER not in ("bedrock", "rehearsal"):
        raise ValueError(f"MODEL_PROVIDER must be 'bedrock' or 'rehearsal', not {MODEL_PROVIDER!r}")
    if MODEL_PROVIDER == "rehearsal":
        logger.warning("REHEARSAL MODE: no model is in use; every reply is scripted.")
