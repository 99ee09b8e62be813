"""The Welt wire boundary: the request payload in, the renderable events out.

This is the trust boundary, and it is one straight path. Every payload is
checked against a JSON Schema of Welt's request before anything else reads
it, so nothing smaller, emptier or half-decoded ever reaches the model; a
payload off the schema ends in one `error` event naming the JSON path and
the rule it broke. A message this process has already passed is not
checked again (checked_messages.py): Welt resends the whole thread every
turn. Then the one rule of the contract that no schema can say: document
names are unique within a payload. welt-io-strands then decodes it, the run
starts with this turn's limits (run_limits.py), and the adapter reduces the
stream to Welt's events (`renderable_events`). What stays here is what the
adapter leaves to the agent: answers checked against the questions they
answer, the file ceiling of one stream chunk, and the notices the human
must not miss.
"""

import json
from collections.abc import AsyncIterator, Iterable
from contextlib import aclosing
from importlib.resources import files
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from strands import Agent
from welt_io_strands import decode_interrupt_responses, decode_messages, renderable_events

from .checked_messages import CheckedMessages
from .run_limits import limit_notice, turn_limits
from .tool_errors import structured_error

# Welt's request, written from its wire contract (v0.8 onwards). The tests
# check their fixtures against the same file.
SCHEMA = json.loads(files(__package__).joinpath("welt_request.schema.json").read_text())
_VALIDATOR = Draft202012Validator(SCHEMA)
_CHECKED_MESSAGES = CheckedMessages(SCHEMA)

# AgentCore caps one stream chunk at 10 MB; a file event carries base64
# (4/3 of the raw size) plus its name, so about 7 MB of raw file fits.
MAX_FILE_BYTES = 7 * 1024 * 1024

# Welt renders at most this many buttons, each value at most this long as
# JSON; past either, it shows its default buttons instead.
MAX_BUTTONS = 25
MAX_BUTTON_VALUE = 1800

# Content blocks that would put words in the model's mouth as its own past
# actions. Welt never sends them; the schema refuses them with every other
# unknown key, and the error says why these two matter.
_FORGED_BLOCKS = ("'toolUse'", "'toolResult'")

# Where a CLI prompt's text sits once it is a turn; errors name `$.prompt`.
_PROMPT_TEXT = "$.messages[0].content[0].text"


def payload_problem(payload: Any) -> str | None:
    """What makes a payload one Welt could not have sent, or None when Welt could have sent it.

    A payload the quick path cannot pass is checked whole, so a refusal
    names the same path and rule whether or not its messages were seen.
    """
    if not _CHECKED_MESSAGES.fit(payload):
        error = best_match(_VALIDATOR.iter_errors(payload))
        if error is not None:
            return _schema_problem(error)
    if "messages" in payload:
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


def as_welt_request(payload: Any) -> tuple[Any, str | None]:
    """The payload as Welt's request, and what makes it one Welt could not have sent.

    The AgentCore CLI (`agentcore dev "hi"`, its browser chat, `agentcore
    invoke`) sends `{"prompt": "hi"}`. It becomes the one-message user turn
    Welt would send, and then meets the same schema as any other payload.
    """
    if isinstance(payload, dict) and payload.keys() == {"prompt"}:
        turn = {"messages": [{"role": "user", "content": [{"text": payload["prompt"]}]}]}
        problem = payload_problem(turn)
        return turn, problem and problem.replace(_PROMPT_TEXT, "$.prompt")
    return payload, payload_problem(payload)


def answers_problem(questions: dict[str, Any], answers: dict[str, dict]) -> str | None:
    """Why these answers cannot resume the run that asked these questions, or None if they can.

    The one place an answer is checked against its question (the schema has
    already checked its shape). Welt sends answers only once every question
    is answered, so an unknown or a missing id is refused whole. welt-io-strands
    hands a tool the value alone, so the widget it came from is checked here:
    a button press must carry a value one of the question's buttons declares;
    typed text must go to a question with a text field, and must not equal a
    button's value, or typing "Approve" would press it. A null answers
    nothing: Strands would take it for "not answered yet" and ask again.
    A refused answer loses nothing: the run keeps waiting for a good one.
    """
    unknown = sorted(set(answers) - set(questions))
    if unknown:
        return f"{', '.join(unknown)} is not a question this run asked"
    missing = sorted(set(questions) - set(answers))
    if missing:
        return f"{', '.join(missing)} still needs an answer"
    for interrupt_id, answer in answers.items():
        problem = _answer_problem(questions[interrupt_id], answer)
        if problem:
            return (
                f"the answer to {interrupt_id} was refused: {problem}. The question is still open"
            )
    return None


def _answer_problem(reason: Any, answer: dict) -> str | None:
    value, source = answer["value"], answer["source"]
    if value is None:
        return "a null answer answers nothing; press a button or type a reply"
    buttons, takes_text = _widgets(reason)
    if source == "input":
        if not takes_text:
            return "this question has no text field, so typed text cannot answer it"
        if not isinstance(value, str):
            return "typed text must be a string"
        if value in [button for button in buttons if isinstance(button, str)]:
            return f"typed text {value!r} is a button's value; press the button instead"
        return None
    if _as_json(value) not in {_as_json(button) for button in buttons}:
        return "the answer is not the value of any of this question's buttons"
    return None


def error_event(message: str) -> dict:
    """The event Welt shows as a reply-failure notice."""
    return {"error": message}


async def reply_events(
    agent: Agent, payload: dict, files_from: frozenset[str]
) -> AsyncIterator[dict]:
    """Start the run the payload asks for and stream the events Welt renders.

    Every layer is closed when the consumer stops early: an agent whose
    stream is left open stays locked for the next request. A file too large
    for one stream chunk is replaced by a message saying why, so the stream
    goes on instead of failing at AgentCore.
    """
    async with (
        aclosing(agent.stream_async(_prompt(payload), limits=turn_limits(agent))) as raw,
        aclosing(_with_notices(raw)) as noticed,
        aclosing(renderable_events(noticed, agent=agent, files_from=files_from)) as events,
    ):
        async for event in events:
            file = event.get("file")
            if file is not None and len(file["bytes"]) * 3 // 4 > MAX_FILE_BYTES:
                yield {
                    "data": (
                        f"\n\n_{file['name']} is too large to upload here "
                        f"(over {MAX_FILE_BYTES // (1024 * 1024)} MB), so it was not sent._\n\n"
                    )
                }
                continue
            yield event


def _prompt(payload: dict) -> list:
    """What the run starts from: the turn's messages, or the answers that resume it.

    welt-io-strands' `start_reply` does the same, but cannot pass this turn's
    limits to Strands; its two decoders do all the decoding.
    """
    if "interrupt_responses" in payload:
        return decode_interrupt_responses(payload["interrupt_responses"])
    return decode_messages(payload["messages"])


async def _with_notices(stream: AsyncIterator[dict]) -> AsyncIterator[dict]:
    """Tell the human, not only the model, what stopped a call or the turn.

    A refusal they cared about (the gate's, a run limit's) and a turn that
    Strands stopped at its limit would otherwise reach only the model, or
    nobody, and the thread would fall silent.
    """
    async for event in stream:
        result = event.get("result")
        notice = limit_notice(getattr(result, "stop_reason", None)) if result else None
        if notice:
            yield {"data": f"\n\n_{notice}_\n\n"}
        message = event.get("message")
        for block in message.get("content", []) if isinstance(message, dict) else []:
            error = structured_error(block["toolResult"]) if "toolResult" in block else None
            if error is not None and error[0].tell_the_human:
                yield {"data": f"\n\n_{error[1]}_\n\n"}
        yield event


def _widgets(reason: Any) -> tuple[list, bool]:
    """The values the question's buttons answer, and whether it has a text field.

    Read as Welt renders the reason: a structured reason shows what it
    declares; anything else (a string, a reason with an unknown key, more
    buttons or longer values than Welt renders), or a structured reason that
    declares nothing, gets Welt's default Approve and Reject buttons, which
    answer True and False.
    """
    options = reason.get("options", []) if isinstance(reason, dict) else None
    structured = (
        isinstance(reason, dict)
        and isinstance(reason.get("message"), str)
        and set(reason) <= {"message", "options", "approve", "reject", "input"}
        and isinstance(options, list)
        and all(isinstance(option, dict) and "value" in option for option in options)
        and len(options) <= MAX_BUTTONS
        and all(len(_as_json(option["value"])) <= MAX_BUTTON_VALUE for option in options)
    )
    if not structured:
        return [True, False], False
    buttons = [option["value"] for option in options]
    buttons += [True] * ("approve" in reason) + [False] * ("reject" in reason)
    takes_text = "input" in reason
    return (buttons, takes_text) if buttons or takes_text else ([True, False], False)


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


def _as_json(value: Any) -> str:
    """Compare answers as JSON: in Python, True == 1, but no button answering 1 is Approve."""
    return json.dumps(value, sort_keys=True)
