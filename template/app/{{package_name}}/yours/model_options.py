"""Options for the model, per provider: model.py passes them when it builds the model. Yours.

MODEL_PROVIDER picks the entry; its keywords go to that provider's Strands
model as they are, beside the model id, which MODEL_ID (or the model_id
answer) names. Anthropic's API needs a ceiling on each reply: model.py
sends max_tokens=4096 unless you set one here.
"""

MODEL_OPTIONS: dict[str, dict] = {
    # strands.models.bedrock.BedrockModel: temperature, max_tokens, top_p,
    # stop_sequences, additional_request_fields, ...
    "bedrock": {
        # "temperature": 0.3,
        # "max_tokens": 2048,
    },
    # strands.models.anthropic.AnthropicModel: max_tokens, and params for the API.
    "anthropic": {
        # "max_tokens": 8192,
        # "params": {"temperature": 0.3},
    },
    # strands.models.openai.OpenAIModel: params for the API.
    "openai": {
        # "params": {"temperature": 0.3, "max_tokens": 2048},
    },
}
