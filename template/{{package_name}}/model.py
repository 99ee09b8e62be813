"""The model, built in one place.

Nothing else in the package knows which model or provider is in use, so
switching models is a change here (or the MODEL_ID variable) and tests can
hand the agent a scripted model instead.
"""

from strands.models import Model
from strands.models.bedrock import BedrockModel

from .settings import MODEL_ID


def build_model() -> Model:
    """The Bedrock model named by MODEL_ID, or the Strands default when empty."""
    if MODEL_ID:
        return BedrockModel(model_id=MODEL_ID)
    return BedrockModel()
