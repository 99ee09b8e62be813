"""Welt's request, checked at the trust boundary before anything else reads it.

Every payload is checked against a JSON Schema of Welt's request first, so
nothing smaller, emptier or half-decoded ever reaches the model; a payload
off the schema is refused with the JSON path and the rule it broke, and the
stream ends in one `error` event. A message this process has already
passed is not checked again (checked_messages.py): Welt resends the whole
thread every turn. Then the one rule of the contract that no schema can
say: document names are unique within a payload. What passes is typed as
`WeltRequest` from here on.

Before the schema, answers are held to two bounds no Welt request comes
near: how many one request carries, and how long an interrupt id is. An id
is copied into the error event and the audit line that refuse it, and a
client that is not Welt could send fifty ids of 100 KB each; past either
bound, the request is refused whole, in one line that quotes at most
SHOWN_OF_AN_ID characters of an id. Every event and line that repeats an
id shows it so (`shown_text`).
"""

import json
from collections.abc import Iterable
from importlib.resources import files
from typing import Any, Literal, TypedDict, cast, final

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from ..platform.logs import shortened
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

# The longest interrupt id taken. Strands makes them as
# v1:tool_call:<toolUseId>:<uuid>, about 90 characters with the toolUseIds
# of Bedrock (at most 64), Anthropic and OpenAI (about 30): five times that
# leaves room for any provider's, and bounds what one id can carry.
MAX_INTERRUPT_ID = 512
# How much of an id, or of any text a client sent, an error event or a log
# line repeats: a whole real id, or the start of anything longer.
SHOWN_OF_AN_ID = 120
# The most answers a request may carry when the caller names no bound:
# one per question of a stop, which asks at most one per tool call of the
# turn, and MAX_TOOL_CALLS_PER_TURN's default caps those.
MOST_ANSWERS = 30


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


def as_welt_request(payload: object, most_answers: int = MOST_ANSWERS) -> WeltRequest:
    """The payload as Welt's request; RefusedPayload says what makes it one Welt could not send.

    The AgentCore CLI (`agentcore dev "hi"`, its browser chat, `agentcore
    invoke`) sends `{"prompt": "hi"}`. It becomes the one-message user turn
    Welt would send, and then meets the same schema as any other payload.
    `most_answers` is the most questions one stop of this agent can ask.
    """
    if isinstance(payload, dict) and payload.keys() == {"prompt"}:
        turn = {"messages": [{"role": "user", "content": [{"text": payload["prompt"]}]}]}
        problem = payload_problem(turn)
        if problem:
            raise RefusedPayload(problem.replace(_PROMPT_TEXT, "$.prompt"))
        return cast(WeltTurn, turn)
    problem = payload_problem(payload, most_answers)
    if problem:
        raise RefusedPayload(problem)
    return cast(WeltRequest, payload)


def payload_problem(payload: object, most_answers: int = MOST_ANSWERS) -> str | None:
    """What makes a payload one Welt could not have sent, or None when Welt could have sent it.

    A payload the quick path cannot pass is checked whole, so a refusal
    names the same path and rule whether or not its messages were seen.
    """
    beyond = _beyond_bounds(payload, most_answers)
    if beyond:
        return beyond
    if not _CHECKED_MESSAGES.fit(payload):
        error = best_match(_VALIDATOR.iter_errors(payload))
        if error is not None:
            return _schema_problem(error)
    if isinstance(payload, dict) and "messages" in payload:
        return _repeated_document_name(payload["messages"])
    return None


def shown_text(text: str, most: int = SHOWN_OF_AN_ID) -> str:
    """Text a client sent, as an event or a line repeats it: whole when short, else its start."""
    return shortened(text, most)


def _beyond_bounds(payload: object, most_answers: int) -> str | None:
    """Answers past either bound: more than a stop asks, or an id longer than any question's."""
    answers = payload.get("interrupt_responses") if isinstance(payload, dict) else None
    if not isinstance(answers, dict):
        return None
    if len(answers) > most_answers:
        return (
            f"$.interrupt_responses carries {len(answers):,} answers, more than the "
            f"{most_answers} questions one stop of this agent can ask (one per tool call of "
            "a turn, MAX_TOOL_CALLS_PER_TURN)"
        )
    for interrupt_id in answers:
        if isinstance(interrupt_id, str) and len(interrupt_id) > MAX_INTERRUPT_ID:
            return (
                f"$.interrupt_responses names an interrupt id of {len(interrupt_id):,} "
                f"characters, starting {interrupt_id[:40]!r}: longer than the "
                f"{MAX_INTERRUPT_ID} any question's id may have"
            )
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
        elif len(part) > SHOWN_OF_AN_ID:
            path += f"[{part[:SHOWN_OF_AN_ID]!r}...]"
        elif part.isidentifier():
            path += f".{part}"
        else:
            path += f"[{part!r}]"
    return path
