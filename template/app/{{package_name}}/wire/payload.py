"""Welt's request, checked at the trust boundary before anything else reads it.

Every payload is checked against a JSON Schema of Welt's request first, so
nothing smaller, emptier or half-decoded ever reaches the model; a payload
off the schema is refused with the JSON path and the rule it broke, and the
stream ends in one `error` event. A message this process has already
passed is not checked again (checked_messages.py): Welt resends the whole
thread every turn. Then the one rule of the contract that no schema can
say: document names are unique within a payload. What passes is typed as
`WeltRequest` from here on.
"""

import json
from collections.abc import Iterable
from importlib.resources import files
from typing import Any, Literal, TypedDict, cast, final

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from .checked_messages import CheckedMessages

# Welt's request, written from its wire contract (v0.8 onwards). The tests
# check their fixtures against the same file.
SCHEMA: dict[str, Any] = json.loads(
    files(__package__).joinpath("welt_request.schema.json").read_text()
)
_VALIDATOR = Draft202012Validator(SCHEMA)
_CHECKED_MESSAGES = CheckedMessages(SCHEMA)

# Content blocks that would put words in the model's mouth as its own past
# actions. Welt never sends them; the schema refuses them with every other
# unknown key, and the error says why these two matter.
_FORGED_BLOCKS = ("'toolUse'", "'toolResult'")

# Where a CLI prompt's text sits once it is a turn; errors name `$.prompt`.
_PROMPT_TEXT = "$.messages[0].content[0].text"


class WeltMessage(TypedDict):
    """A message of the thread, as the schema takes it; welt-io-strands decodes its blocks."""

    role: Literal["user", "assistant"]
    content: list[dict[str, Any]]


@final  # so that `"interrupt_responses" in request` tells the two kinds apart
class WeltTurn(TypedDict):
    """A new turn: the thread's messages (with history, those since the agent's last reply)."""

    messages: list[WeltMessage]


class WeltAnswer(TypedDict):
    """One answer: its value, and whether a button ("option") or typed text ("input") gave it."""

    value: Any
    source: Literal["option", "input"]


@final
class WeltAnswers(TypedDict):
    """The answers that resume a run stopped on questions, by interrupt id."""

    interrupt_responses: dict[str, WeltAnswer]


WeltRequest = WeltTurn | WeltAnswers


class RefusedPayload(ValueError):
    """A payload Welt could not have sent; the message names the JSON path and the rule."""


def as_welt_request(payload: object) -> WeltRequest:
    """The payload as Welt's request; RefusedPayload says what makes it one Welt could not send.

    The AgentCore CLI (`agentcore dev "hi"`, its browser chat, `agentcore
    invoke`) sends `{"prompt": "hi"}`. It becomes the one-message user turn
    Welt would send, and then meets the same schema as any other payload.
    """
    if isinstance(payload, dict) and payload.keys() == {"prompt"}:
        turn = {"messages": [{"role": "user", "content": [{"text": payload["prompt"]}]}]}
        problem = payload_problem(turn)
        if problem:
            raise RefusedPayload(problem.replace(_PROMPT_TEXT, "$.prompt"))
        return cast(WeltTurn, turn)
    problem = payload_problem(payload)
    if problem:
        raise RefusedPayload(problem)
    return cast(WeltRequest, payload)


def payload_problem(payload: object) -> str | None:
    """What makes a payload one Welt could not have sent, or None when Welt could have sent it.

    A payload the quick path cannot pass is checked whole, so a refusal
    names the same path and rule whether or not its messages were seen.
    """
    if not _CHECKED_MESSAGES.fit(payload):
        error = best_match(_VALIDATOR.iter_errors(payload))
        if error is not None:
            return _schema_problem(error)
    if isinstance(payload, dict) and "messages" in payload:
        return _repeated_document_name(payload["messages"])
    return None


def _schema_problem(error: ValidationError) -> str:
    detail = error.message if len(error.message) <= 200 else error.message[:200] + "..."
    where = _json_path(error.absolute_path)
    problem = f"{where} breaks the schema's '{error.validator}' rule: {detail}"
    if error.validator == "additionalProperties" and any(
        block in error.message for block in _FORGED_BLOCKS
    ):
        problem += " (Welt never sends tool calls or results: the turn is refused as forged)"
    return problem


def _repeated_document_name(messages: list[dict]) -> str | None:
    """Where a document takes a name an earlier document of the payload has, or None.

    Welt keeps names unique (it suffixes a repeated file name), and the
    model tells documents apart by name: with two of one name, it would
    read one of them as the other.
    """
    named: dict[str, str] = {}
    for m, message in enumerate(messages):
        for b, block in enumerate(message["content"]):
            if "document" not in block:
                continue
            name = block["document"]["name"]
            where = f"$.messages[{m}].content[{b}].document.name"
            if name in named:
                return (
                    f"{where} repeats the document name {name!r} of {named[name]}: "
                    "document names are unique within a payload"
                )
            named[name] = where
    return None


def _json_path(parts: Iterable[str | int]) -> str:
    """A JSONPath such as $.messages[0].content or $.interrupt_responses['v1:id']."""
    path = "$"
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part.isidentifier():
            path += f".{part}"
        else:
            path += f"[{part!r}]"
    return path
