"""What one request of a thread used: its tokens, as Strands counted them, and their price.

Strands counts the tokens each model call reports, per invocation of the
agent (`event_loop_metrics.latest_agent_invocation`); a request is one
invocation, a turn or a resume, so that is the figure taken, never the
agent's running total, which an agent reused between turns carries on.

The price is looked up by the exact model id in the table you keep in
yours/model_prices.py: a model that is not in it costs "unknown", never a
guess from a similar name (a regional inference profile is priced apart
from the global one, and a newer model's price is not its predecessor's).
Money is counted in whole millionths of a dollar, so counters that add up
thousands of turns never drift as floats do.
"""

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass

from opentelemetry import trace
from strands import Agent
from strands.models import Model

from ..settings import ConfigurationError

logger = logging.getLogger(__name__)
_tracer = trace.get_tracer(__name__)

UNKNOWN = "unknown"
PRICE_FIELDS = ("input", "output", "cache_read", "cache_write")


class PriceError(ConfigurationError):
    """A row of yours/model_prices.py the agent cannot price with; the message names it."""


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens of each kind, for one model."""

    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0


@dataclass(frozen=True)
class Usage:
    """The tokens of one request, as the provider reported them to Strands."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total: int = 0

    @property
    def uncached_input(self) -> int:
        """Input tokens billed at the input price.

        Bedrock and Anthropic report cached tokens apart from inputTokens;
        OpenAI counts them inside it (then input + output == total), and
        pricing them twice would overstate every cached turn.
        """
        cached = self.cache_read + self.cache_write
        if cached and self.input + self.output == self.total:
            return max(0, self.input - cached)
        return self.input


class Prices:
    """The price table: the model's id, exactly, to its price."""

    def __init__(self, table: Mapping[str, Mapping[str, float]]) -> None:
        self._table = {model: _price(model, row) for model, row in table.items()}

    def __contains__(self, model: str) -> bool:
        return model in self._table

    def most_micros(self, tokens: int, model: str) -> int | None:
        """The most these tokens could cost, each at the model's dearest rate; None if unpriced."""
        price = self._table.get(model)
        if price is None:
            return None
        return round(tokens * max(price.input, price.output, price.cache_read, price.cache_write))

    def tokens_for(self, cost_micros: int, model: str) -> int:
        """The tokens a cost surely pays for, each at the model's dearest rate."""
        price = self._table[model]
        dearest = max(price.input, price.output, price.cache_read, price.cache_write)
        return int(cost_micros / dearest) if dearest else cost_micros

    def cost_micros(self, usage: Usage, model: str) -> int | None:
        """The cost in millionths of a dollar; None for a model the table does not price."""
        price = self._table.get(model)
        if price is None:
            return None
        # Dollars per million tokens times tokens is millionths of a dollar.
        return round(
            usage.uncached_input * price.input
            + usage.output * price.output
            + usage.cache_read * price.cache_read
            + usage.cache_write * price.cache_write
        )


def _price(model: str, row: Mapping[str, float]) -> Price:
    unknown = sorted(set(row) - set(PRICE_FIELDS))
    if unknown or not {"input", "output"} <= set(row):
        raise PriceError(
            f"yours/model_prices.py: the price of {model!r} takes input and output, and "
            "optionally cache_read and cache_write, in dollars per million tokens "
            f"(got {sorted(row)})"
        )
    for name, value in row.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
            raise PriceError(
                f"yours/model_prices.py: {model!r} {name} must be a number of dollars per "
                f"million tokens, 0 or more, not {value!r}"
            )
    return Price(**{name: float(value) for name, value in row.items()})


def usage_of(agent: Agent) -> Usage:
    """What the agent's latest invocation used, from Strands' own metrics."""
    invocation = agent.event_loop_metrics.latest_agent_invocation
    if invocation is None:
        return Usage()
    counted = invocation.usage
    return Usage(
        input=counted.get("inputTokens", 0),
        output=counted.get("outputTokens", 0),
        cache_read=counted.get("cacheReadInputTokens", 0),
        cache_write=counted.get("cacheWriteInputTokens", 0),
        total=counted.get("totalTokens", 0),
    )


def model_id_of(model: Model) -> str:
    """The model's id as its provider is called with it (Bedrock's default resolved)."""
    config = model.get_config()
    named = config.get("model_id") if isinstance(config, Mapping) else None
    return str(named) if named else UNKNOWN


def record_usage(
    *,
    kind: str,
    usage: Usage,
    model: str,
    cost_micros: int | None,
    session: str,
    started_by: str | None,
) -> dict[str, object]:
    """One JSON log line per request, and the same figures on a span of their own.

    A span of its own: Strands has ended the agent's span when the stream
    ends, and on AgentCore the request's span is the runtime's, so figures
    set on whichever span is current would land on one that may be gone.
    """
    fields: dict[str, object] = {
        "usage": kind,
        "sessionId": session,
        "startedBy": started_by,
        "model": model,
        "inputTokens": usage.input,
        "outputTokens": usage.output,
        "cacheReadInputTokens": usage.cache_read,
        "cacheWriteInputTokens": usage.cache_write,
        "totalTokens": usage.total,
    }
    # An unknown cost is a field of its own, never costUsd: Logs Insights'
    # sum(costUsd) then adds numbers only, and the report counts the rest.
    if cost_micros is None:
        fields["cost"] = UNKNOWN
    else:
        fields["costUsd"] = cost_micros / 1_000_000
    cost = "an unknown cost" if cost_micros is None else f"${cost_micros / 1_000_000:.6f}"
    logger.info(
        "%s used %d tokens of %s, %s", kind, usage.total, model, cost, extra={"fields": fields}
    )
    attributes = {
        f"welt.usage.{name}": value if isinstance(value, str | int | float) else json.dumps(value)
        for name, value in fields.items()
        if value is not None
    }
    with _tracer.start_as_current_span("welt.usage", attributes=attributes):
        pass
    return fields
