"""A Strands model that plays back scripted turns: no AWS, no network.

Strands ships no fake model, and a test or a rehearsal that needs Bedrock
cannot run offline. Each turn is the list of Converse stream events one
model call yields; the model records the messages of every call, so a test
can check what the model was shown (a tool's result, a denial).
"""

import copy
import json
from collections.abc import AsyncIterator
from typing import Any

from strands.models import Model


class ScriptedModel(Model):
    """Plays the given turns in order, one per model call."""

    # Tests read what the model was shown; a long-lived rehearsal server must not keep it.
    records_requests = True

    def __init__(self, *turns: list[dict]) -> None:
        self.turns = list(turns)
        self.requests: list[list[dict]] = []

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> dict:
        return {"model_id": "scripted"}

    async def structured_output(self, output_model, prompt, system_prompt=None, **kwargs):
        raise NotImplementedError("the scripted model plays back text and tool calls only")
        yield  # pragma: no cover

    async def stream(
        self, messages, tool_specs=None, system_prompt=None, **kwargs
    ) -> AsyncIterator[dict]:
        if self.records_requests:
            self.requests.append(copy.deepcopy(messages))
        for event in self.next_turn(messages, tool_specs):
            yield event

    def next_turn(self, messages: list[dict], tool_specs: list[dict] | None = None) -> list[dict]:
        if not self.turns:
            raise RuntimeError("the scripted model has no turns left")
        return self.turns.pop(0)

    def last_tool_results(self) -> list[dict]:
        """The toolResult blocks of the newest message the model was sent."""
        newest = self.requests[-1][-1]
        return [block["toolResult"] for block in newest["content"] if "toolResult" in block]


def reply(*chunks: str) -> list[dict]:
    """A model turn that streams text, one delta per chunk, and ends the turn."""
    deltas = [{"contentBlockDelta": {"delta": {"text": chunk}}} for chunk in chunks]
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {}}},
        *deltas,
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "end_turn"}},
    ]


def call(name: str, tool_use_id: str, **tool_input: Any) -> list[dict]:
    """The content-block events of one tool call."""
    return [
        {"contentBlockStart": {"start": {"toolUse": {"name": name, "toolUseId": tool_use_id}}}},
        {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(tool_input)}}}},
        {"contentBlockStop": {}},
    ]


def use(*calls: list[dict], before: str = "") -> list[dict]:
    """A model turn that requests the given tool calls, all at once, after optional text."""
    text = []
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
