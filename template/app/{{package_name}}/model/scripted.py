"""A Strands model that plays back scripted turns: no AWS, no network.

Strands ships no fake model, and a test or a rehearsal that needs Bedrock
cannot run offline. Each turn is the list of Converse stream events one
model call yields; the model records the messages and the system prompt of
every call, so a test can check what the model was shown (a tool's result,
a denial, a memory).
"""

import copy
import json
from collections.abc import AsyncGenerator
from itertools import pairwise
from typing import Any

from strands.models import Model
from strands.types.content import Messages
from strands.types.tools import ToolResult, ToolSpec

# One Converse stream event, as a dict: Strands' StreamEvent types a text
# delta's `delta` as ContentBlockDelta (an index and a delta), not the
# DeltaContent a stream carries, so the events a model yields do not fit it.
Event = dict[str, Any]


class ScriptedModel(Model):
    """Plays the given turns in order, one per model call."""

    # Tests read what the model was shown; a long-lived rehearsal server must not keep it.
    records_requests = True

    def __init__(self, *turns: list[Event], model_id: str = "scripted") -> None:
        self.turns = list(turns)
        self.model_id = model_id
        self.requests: list[Messages] = []
        self.system_prompts: list[str | None] = []

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> dict[str, str]:
        return {"model_id": self.model_id}

    async def structured_output(self, output_model, prompt, system_prompt=None, **kwargs):
        raise NotImplementedError("the scripted model plays back text and tool calls only")
        yield  # pragma: no cover

    async def stream(  # type: ignore[override]  # yields Events, see above
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[Event]:
        if self.records_requests:
            self.requests.append(copy.deepcopy(messages))
            self.system_prompts.append(system_prompt)
        for event in self.next_turn(messages, tool_specs):
            yield event

    def next_turn(
        self, messages: Messages, tool_specs: list[ToolSpec] | None = None
    ) -> list[Event]:
        if not self.turns:
            raise RuntimeError("the scripted model has no turns left")
        return self.turns.pop(0)

    def last_tool_results(self) -> list[ToolResult]:
        """The toolResult blocks of the newest message the model was sent."""
        newest = self.requests[-1][-1]
        return [block["toolResult"] for block in newest["content"] if "toolResult" in block]


def reply(*chunks: str) -> list[Event]:
    """A model turn that streams text, one delta per chunk, and ends the turn."""
    deltas = [{"contentBlockDelta": {"delta": {"text": chunk}}} for chunk in chunks]
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {}}},
        *deltas,
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "end_turn"}},
    ]


def with_usage(
    turn: list[Event], input: int, output: int, cache_read: int = 0, cache_write: int = 0
) -> list[Event]:
    """The turn, ending with the usage a provider reports in its stream's metadata event.

    Strands counts a call's tokens from that event alone (its metrics), as
    Bedrock's ConverseStream sends it after messageStop.
    """
    usage: dict[str, int] = {
        "inputTokens": input,
        "outputTokens": output,
        "totalTokens": input + output + cache_read + cache_write,
    }
    if cache_read:
        usage["cacheReadInputTokens"] = cache_read
    if cache_write:
        usage["cacheWriteInputTokens"] = cache_write
    return [*turn, {"metadata": {"usage": usage, "metrics": {"latencyMs": 1}}}]


def call(name: str, tool_use_id: str, **tool_input: object) -> list[Event]:
    """The content-block events of one tool call."""
    return [
        {"contentBlockStart": {"start": {"toolUse": {"name": name, "toolUseId": tool_use_id}}}},
        {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(tool_input)}}}},
        {"contentBlockStop": {}},
    ]


def call_in_pieces(
    name: str, tool_use_id: str, pieces: int, /, **tool_input: object
) -> list[Event]:
    """The events of one tool call whose input streams in `pieces` deltas, as real models send it.

    Strands hands on the whole call after every delta, so a test of what
    reaches the wire needs more than the one delta `call` sends.
    """
    text = json.dumps(tool_input)
    if not 1 <= pieces <= len(text):
        raise ValueError(f"{text!r} cannot be sent in {pieces} pieces")
    cuts = [len(text) * piece // pieces for piece in range(pieces + 1)]
    deltas = [
        {"contentBlockDelta": {"delta": {"toolUse": {"input": text[start:end]}}}}
        for start, end in pairwise(cuts)
    ]
    start = {"toolUse": {"name": name, "toolUseId": tool_use_id}}
    return [{"contentBlockStart": {"start": start}}, *deltas, {"contentBlockStop": {}}]


def use(*calls: list[Event], before: str = "") -> list[Event]:
    """A model turn that requests the given tool calls, all at once, after optional text."""
    text: list[Event] = []
    if before:
        text = [
            {"contentBlockStart": {"start": {}}},
            {"contentBlockDelta": {"delta": {"text": before}}},
            {"contentBlockStop": {}},
        ]
    blocks = [event for one_call in calls for event in one_call]
    return [
        {"messageStart": {"role": "assistant"}},
        *text,
        *blocks,
        {"messageStop": {"stopReason": "tool_use"}},
    ]
