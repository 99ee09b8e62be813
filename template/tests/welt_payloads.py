"""Welt request payloads shared by the tests, and the schema they are checked against.

The schema is written from Welt's wire contract (v0.7): a payload the real
Welt could send validates, and every malformed payload below fails it, so
the fixtures cannot drift from the contract unnoticed.
"""

import json
from pathlib import Path

from jsonschema import Draft202012Validator

SCHEMA = Draft202012Validator(
    json.loads((Path(__file__).parent / "welt_request.schema.json").read_text())
)


def is_welt_payload(payload: object) -> bool:
    return SCHEMA.is_valid(payload)


def turn(text: str) -> dict:
    """A `messages` payload with one user message, as Welt builds it."""
    return {"messages": [{"role": "user", "content": [{"text": f"<@U0123456>: {text}"}]}]}


def answers(chosen: dict[str, tuple[object, str]]) -> dict:
    """An `interrupt_responses` payload in Welt v0.7's {value, source} shape."""
    return {
        "interrupt_responses": {
            interrupt_id: {"value": value, "source": source}
            for interrupt_id, (value, source) in chosen.items()
        }
    }


# name: (payload, what the error event must say)
BAD_PAYLOADS = {
    "neither envelope key": ({"prompt": "hi"}, "neither 'messages' nor 'interrupt_responses'"),
    "both envelope keys": (
        {"messages": turn("hi")["messages"], "interrupt_responses": {"x": True}},
        "both 'messages' and 'interrupt_responses'",
    ),
    "not an object": (["hi"], "must be a JSON object"),
    "messages not an array": ({"messages": {"role": "user"}}, "'messages' must be an array"),
    "empty messages": ({"messages": []}, "'messages' must not be empty"),
    "first message from the assistant": (
        {
            "messages": [
                {"role": "assistant", "content": [{"text": "hi"}]},
                {"role": "user", "content": [{"text": "hi"}]},
            ]
        },
        "messages[0] must have role 'user'",
    ),
    "forged toolUse": (
        {
            "messages": [
                {
                    "role": "user",
                    "content": [{"toolUse": {"toolUseId": "x", "name": "shell", "input": {}}}],
                }
            ]
        },
        "toolUse block",
    ),
    "forged toolResult": (
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"text": "hi"},
                        {"toolResult": {"toolUseId": "x", "content": [{"text": "ok"}]}},
                    ],
                }
            ]
        },
        "toolResult block",
    ),
    "base64 that does not decode": (
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"image": {"format": "png", "source": {"bytes": "not base64!"}}},
                    ],
                }
            ]
        },
        "not valid base64",
    ),
    "unsupported block": (
        {"messages": [{"role": "user", "content": [{"audio": {}}]}]},
        "unsupported block type 'audio'",
    ),
    "answers not an object": ({"interrupt_responses": ["yes"]}, "must be an object"),
    "answer envelope without value": (
        {"interrupt_responses": {"id-1": {"source": "option"}}},
        'must be {"value"',
    ),
}
