"""What each model costs, in dollars per million tokens: usage lines are priced with it. Yours.

The key is the model id exactly as the agent calls the model (MODEL_ID, or
Strands' default for Bedrock); a model missing here is logged with cost
"unknown", and counts toward token budgets only. `cache_read` and
`cache_write` price the tokens a provider reports as read from or written
to its prompt cache.

The rows below are list prices for on-demand use, read on 2026-12-03 from
Anthropic's pricing page (platform.claude.com/docs/en/about-claude/pricing:
Claude Sonnet 4 and 4.6 at $3 input, $15 output, $0.30 cache hits and $3.75
five-minute cache writes per million tokens) and OpenAI's
(platform.openai.com/docs/pricing: gpt-4o-mini at $0.15 input, $0.60
output, $0.075 cached input). Amazon Bedrock bills Claude at Anthropic's
list price through the global profile; a Regional profile (us.*) may cost
more. Your account may pay otherwise (a discount, batch, provisioned
throughput, one-hour cache writes): put here what you pay.
"""

MODEL_PRICES: dict[str, dict[str, float]] = {
    # Amazon Bedrock: Strands' default model, through the global inference profile.
    "global.anthropic.claude-sonnet-4-6": {
        "input": 3.00,
        "output": 15.00,
        "cache_read": 0.30,
        "cache_write": 3.75,
    },
    # Amazon Bedrock: the model deploy/environments.toml names, through the US profile.
    "us.anthropic.claude-sonnet-4-20250514-v1:0": {
        "input": 3.00,
        "output": 15.00,
        "cache_read": 0.30,
        "cache_write": 3.75,
    },
    # Anthropic's API: the template's default for model_provider=anthropic.
    "claude-sonnet-4-20250514": {
        "input": 3.00,
        "output": 15.00,
        "cache_read": 0.30,
        "cache_write": 3.75,
    },
    # OpenAI: the template's default for model_provider=openai. Cached input
    # is billed at half price; writing the cache costs nothing extra.
    "gpt-4o-mini": {"input": 0.15, "output": 0.60, "cache_read": 0.075},
}
