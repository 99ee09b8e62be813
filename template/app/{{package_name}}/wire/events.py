"""The run a request starts, reduced to the events Welt renders.

welt-io-strands decodes the request and reduces Strands' stream to Welt's
events (`renderable_events`); what stays here is what the adapter leaves to
the agent: the turn's limits on the run, the file ceiling of one stream
chunk, and the notices the human must not miss.
"""

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any

from strands import Agent
from strands.types.content import Messages
from welt_io_strands import decode_interrupt_responses, decode_messages, renderable_events

from ..gate.run_limits import TurnCaps
from ..gate.tool_errors import structured_error
from .payload import WeltRequest

# AgentCore caps one stream chunk at 10 MB; a file event carries base64
# (4/3 of the raw size) plus its name, so about 7 MB of raw file fits.
MAX_FILE_BYTES = 7 * 1024 * 1024


def error_event(message: str) -> dict[str, str]:
    """The event Welt shows as a reply-failure notice."""
    return {"error": message}


async def reply_events(
    agent: Agent,
    request: WeltRequest,
    files_from: frozenset[str],
    caps: TurnCaps,
    invocation_state: dict[str, Any] | None = None,
    tokens: int | None = None,
) -> AsyncGenerator[dict[str, Any]]:
    """Start the run the payload asks for and stream the events Welt renders.

    Every layer is closed when the consumer stops early: an agent whose
    stream is left open stays locked for the next request. A file too large
    for one stream chunk is replaced by a message saying why, so the stream
    goes on instead of failing at AgentCore. The invocation state reaches
    every hook and tool of this run alone (who sent the request, for one).
    `tokens` caps what the run may use, where a budget holds it to a share.
    A call's indicator goes out once: Strands hands on the call after every
    piece of its input the model streams, and the adapter passes each on,
    so Welt would get one `current_tool_use` per piece.
    """
    # Strands and welt-io-strands declare their streams AsyncIterator; both
    # are async generators, which aclosing closes.
    limits = caps.left_for(agent)
    if tokens is not None:
        limits["total_tokens"] = tokens
    run = agent.stream_async(_prompt(request), limits=limits, invocation_state=invocation_state)
    async with (
        aclosing(run) as raw,  # type: ignore[type-var]
        aclosing(_with_notices(raw, caps)) as noticed,
        aclosing(renderable_events(noticed, agent=agent, files_from=files_from)) as events,  # type: ignore[type-var]
    ):
        indicated: set[object] = set()
        async for event in events:
            indicator = event.get("current_tool_use")
            if indicator is not None:
                if indicator.get("toolUseId") in indicated:
                    continue
                indicated.add(indicator.get("toolUseId"))
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


def _prompt(request: WeltRequest) -> Messages | list[Any]:
    """What the run starts from: the turn's messages, or the answers that resume it.

    welt-io-strands' `start_reply` does the same, but cannot pass this turn's
    limits to Strands; its two decoders do all the decoding.
    """
    if "interrupt_responses" in request:
        return decode_interrupt_responses(request["interrupt_responses"])
    return decode_messages(request["messages"])


async def _with_notices(
    stream: AsyncIterator[dict[str, Any]], caps: TurnCaps
) -> AsyncGenerator[dict[str, Any]]:
    """Tell the human, not only the model, what stopped a call or the turn.

    A refusal they cared about (the gate's, a run limit's) and a turn that
    Strands stopped at its limit would otherwise reach only the model, or
    nobody, and the thread would fall silent.
    """
    async for event in stream:
        result = event.get("result")
        notice = caps.notice(getattr(result, "stop_reason", None)) if result else None
        if notice:
            yield {"data": f"\n\n_{notice}_\n\n"}
        message = event.get("message")
        for block in message.get("content", []) if isinstance(message, dict) else []:
            error = structured_error(block["toolResult"]) if "toolResult" in block else None
            if error is not None and error[0].tell_the_human:
                yield {"data": f"\n\n_{error[1]}_\n\n"}
        yield event
