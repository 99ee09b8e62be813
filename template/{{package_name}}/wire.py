"""The Welt wire boundary: the request payload in, the renderable events out.

This is the trust boundary. Welt sends exactly one envelope per request:
`messages` (a conversation turn) or `interrupt_responses` (answers that
resume an interrupted run). A payload that departs from the contract is
refused here with a WireError naming the problem; nothing smaller, emptier
or half-decoded ever reaches the model.

welt-io-strands 0.4 (the newest release for Python 3.10 and 3.11) decodes
leniently: it rebuilds forged `toolUse` and `toolResult` blocks into
history, turns bad base64 into garbage bytes, and hands Welt v0.7's
`{"value", "source"}` answers to tools unchanged. The checks below close
those gaps whichever adapter release is installed.
"""

import base64
import binascii
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from strands import Agent
from welt_io_strands import decode_messages, renderable_events

from .tool_results import structured_error

# AgentCore caps one stream chunk at 10 MB; a file event carries base64
# (4/3 of the raw size) plus its name, so about 7 MB of raw file fits.
MAX_FILE_BYTES = 7 * 1024 * 1024

_MEDIA_FORMATS = {
    "image": {"gif", "jpeg", "png", "webp"},
    "document": {"csv", "doc", "docx", "html", "md", "pdf", "txt", "xls", "xlsx"},
    "video": {"flv", "mkv", "mov", "mp4", "mpeg", "mpg", "three_gp", "webm", "wmv"},
}
_FORGED_BLOCKS = {"toolUse", "toolResult"}
_DOCUMENT_NAME = re.compile(r"[0-9A-Za-z()\[\] -]{1,200}")
_ANSWER_SOURCES = {"option", "input"}
_TOLD_TO_THE_HUMAN = {"approval-input-changed", "gate-failed"}


class WireError(ValueError):
    """A request payload that breaks Welt's wire contract."""


@dataclass(frozen=True)
class Turn:
    """A conversation turn: the thread so far and the newest user message."""

    history: list[dict]
    prompt: list[dict]


@dataclass(frozen=True)
class Resume:
    """Answers to the pending interrupts, one value per interrupt id."""

    answers: dict[str, Any]

    def strands_input(self) -> list[dict]:
        """The interruptResponse items that Agent.stream_async resumes from.

        Built here rather than by the adapter: welt-io-strands 0.4 takes bare
        answers and 0.10 takes Welt's envelopes, and Strands' own shape is
        the one thing both sides agree on.
        """
        return [
            {"interruptResponse": {"interruptId": interrupt_id, "response": value}}
            for interrupt_id, value in self.answers.items()
        ]


def read_request(payload: Any) -> Turn | Resume:
    """Check a request payload against the contract and decode it."""
    if not isinstance(payload, dict):
        raise WireError(
            "the payload must be a JSON object with 'messages' or "
            f"'interrupt_responses', not {type(payload).__name__}"
        )
    envelopes = [key for key in ("messages", "interrupt_responses") if key in payload]
    if not envelopes:
        raise WireError("the payload has neither 'messages' nor 'interrupt_responses'")
    if len(envelopes) == 2:
        raise WireError(
            "the payload has both 'messages' and 'interrupt_responses'; send exactly one"
        )
    if envelopes == ["messages"]:
        return _read_turn(payload["messages"])
    return _read_resume(payload["interrupt_responses"])


def error_event(message: str) -> dict:
    """The event Welt shows as a reply-failure notice."""
    return {"error": message}


async def outbound_events(
    stream: AsyncIterator[dict], agent: Agent, files_from: set[str]
) -> AsyncIterator[dict]:
    """Reduce the agent's stream to the events Welt renders.

    Tool arguments and output stay off the wire: welt-io-strands 0.4 slims
    tool results but passes `current_tool_use` with its full input, which
    Strands re-sends on every input delta, so it is cut to the name and id
    here. A file too large for one stream chunk is replaced by a message
    saying why, so the stream goes on instead of failing at AgentCore.
    """
    async for event in renderable_events(_with_notices(stream), agent=agent, files_from=files_from):
        tool_use = event.get("current_tool_use")
        if tool_use is not None:
            yield {
                "current_tool_use": {
                    "name": tool_use.get("name"),
                    "toolUseId": tool_use.get("toolUseId"),
                }
            }
            continue
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


async def _with_notices(stream: AsyncIterator[dict]) -> AsyncIterator[dict]:
    """Tell the human, not only the model, when the gate refused an approved call."""
    async for event in stream:
        message = event.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            result = block.get("toolResult") if isinstance(block, dict) else None
            error = structured_error(result) if result is not None else None
            if error is not None and error["kind"] in _TOLD_TO_THE_HUMAN:
                yield {"data": f"\n\n_{error['message']}_\n\n"}
        yield event


def _read_turn(messages: Any) -> Turn:
    if not isinstance(messages, list):
        raise WireError(f"'messages' must be an array, not {type(messages).__name__}")
    if not messages:
        raise WireError("'messages' must not be empty")
    document_names: set[str] = set()
    for index, message in enumerate(messages):
        _check_message(index, message, document_names)
    if messages[0]["role"] != "user":
        raise WireError("messages[0] must have role 'user'")
    if messages[-1]["role"] != "user":
        raise WireError("the last message must have role 'user': it is the turn to answer")
    decoded = decode_messages(messages)
    return Turn(history=decoded[:-1], prompt=decoded[-1]["content"])


def _check_message(index: int, message: Any, document_names: set[str]) -> None:
    where = f"messages[{index}]"
    if not isinstance(message, dict):
        raise WireError(f"{where} must be an object")
    if message.get("role") not in ("user", "assistant"):
        raise WireError(f"{where}.role must be 'user' or 'assistant'")
    content = message.get("content")
    if not isinstance(content, list) or not content:
        raise WireError(f"{where}.content must be a non-empty array")
    for position, block in enumerate(content):
        _check_block(f"{where}.content[{position}]", block, document_names)


def _check_block(where: str, block: Any, document_names: set[str]) -> None:
    if not isinstance(block, dict) or len(block) != 1:
        raise WireError(f"{where} must be an object with exactly one key")
    (kind,) = block
    if kind in _FORGED_BLOCKS:
        raise WireError(
            f"{where} is a {kind} block: Welt never sends tool calls or results, "
            "so the turn is refused as forged"
        )
    if kind == "text":
        if not isinstance(block["text"], str):
            raise WireError(f"{where}.text must be a string")
        return
    if kind not in _MEDIA_FORMATS:
        raise WireError(f"{where} has unsupported block type '{kind}'")
    _check_media(f"{where}.{kind}", kind, block[kind], document_names)


def _check_media(where: str, kind: str, media: Any, document_names: set[str]) -> None:
    if not isinstance(media, dict):
        raise WireError(f"{where} must be an object")
    if media.get("format") not in _MEDIA_FORMATS[kind]:
        allowed = ", ".join(sorted(_MEDIA_FORMATS[kind]))
        raise WireError(f"{where}.format must be one of {allowed}")
    source = media.get("source")
    data = source.get("bytes") if isinstance(source, dict) else None
    if not isinstance(data, str):
        raise WireError(f"{where}.source.bytes must be a base64 string")
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as error:
        raise WireError(f"{where}.source.bytes is not valid base64 ({error})") from None
    if kind == "document":
        name = media.get("name")
        if not isinstance(name, str) or not _DOCUMENT_NAME.fullmatch(name):
            raise WireError(
                f"{where}.name must be 1-200 letters, digits, spaces, "
                "hyphens, parentheses or square brackets"
            )
        if name in document_names:
            raise WireError(f"{where}.name '{name}' is used by another document")
        document_names.add(name)


def _read_resume(responses: Any) -> Resume:
    if not isinstance(responses, dict):
        raise WireError(f"'interrupt_responses' must be an object, not {type(responses).__name__}")
    if not responses:
        raise WireError("'interrupt_responses' must answer at least one interrupt")
    return Resume(
        answers={
            interrupt_id: _answer_value(interrupt_id, answer)
            for interrupt_id, answer in responses.items()
        }
    )


def _answer_value(interrupt_id: str, answer: Any) -> Any:
    """The value a human chose; Welt before v0.7 sent it bare.

    Strands reads a None response as "not answered yet" and would ask the
    same question again, so a JSON null answer is passed on as the text
    "null": an answer the gate and the tools see, and refuse.
    """
    value = _unwrapped(interrupt_id, answer)
    return "null" if value is None else value


def _unwrapped(interrupt_id: str, answer: Any) -> Any:
    if not isinstance(answer, dict):
        return answer
    unknown = set(answer) - {"value", "source"}
    if "value" not in answer or unknown:
        raise WireError(
            f"the answer to interrupt '{interrupt_id}' must be "
            '{"value": ..., "source": "option" | "input"}'
        )
    if "source" in answer and answer["source"] not in _ANSWER_SOURCES:
        raise WireError(
            f"the answer to interrupt '{interrupt_id}' has source "
            f"{answer['source']!r}; expected 'option' or 'input'"
        )
    return answer["value"]
