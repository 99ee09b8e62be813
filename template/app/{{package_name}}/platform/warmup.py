"""POST /warmup: one whole turn through the real stack, before AgentCore V2 takes its snapshot.

On platform V2 (declared in deploy/runtime_stack.py), AgentCore starts the
agent once, posts to this path, snapshots the process, and restores every
new session from that snapshot. What the first turn costs (imports done lazily, the tools'
specs, the schema validator, the gate, the stored-run code, the model
object) is then paid once per deploy instead of once per Slack thread.

The turn plays a script (no model is called, nothing goes over the
network) and stores its run in this process's memory: session storage does
not exist yet at snapshot time, and nothing of the warm-up may be left for
a real thread to find.
"""

import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from strands import Agent
from strands.models import Model

from ..gate.registry import Registry
from ..gate.run_limits import TurnCaps
from ..model.scripted import ScriptedModel, call, reply, use
from ..runs.seal import ProcessKey
from ..runs.storage import MemoryStorage
from ..runs.stored_runs import StoredRuns
from ..turns.conversations import Conversations

# AgentCore's hook takes a path of at most 32 characters, not /invocations or /ping.
WARMUP_PATH = "/warmup"
_SESSION = "warmup"
_DONE = "Warm."


async def warm_up(
    registry: Registry,
    warm_model: Callable[[], object],
    new_agent: Callable[[Model], Agent],
    caps: TurnCaps,
) -> dict[str, Any]:
    """Run the turn; raise if it did not end as scripted, so the deploy fails loudly.

    warm_model builds the real model object into the snapshot, never
    calling it; for a model whose key AgentCore Identity gives per request,
    it imports the provider's client instead (model/providers.py).
    """
    started = time.perf_counter()
    warm_model()
    asks = "ask_human" in {row.name for row in registry.rows}
    question = use(call("ask_human", "warmup-question", question="Warming up?"))
    model = ScriptedModel(*([question] if asks else []), reply(_DONE))
    store = StoredRuns(
        MemoryStorage(), ProcessKey(), keeps_history=False, answer_within_days=1, max_waiting=1
    )
    conversations = Conversations(lambda: model, new_agent, registry, store, caps)
    turn = {"messages": [{"role": "user", "content": [{"text": "<@U0WARMUP>: warm up"}]}]}
    events = [event async for event in conversations.respond(turn, _SESSION)]
    for event in events:
        if "interrupt" in event:  # the stored-run and resume paths, in memory
            answer = {"value": "warm", "source": "input"}
            resume = {"interrupt_responses": {event["interrupt"]["id"]: answer}}
            events = [event async for event in conversations.respond(resume, _SESSION)]
    if events[-1:] != [{"data": _DONE}]:
        raise RuntimeError(f"the warm-up turn did not end as scripted: {events[-3:]}")
    return {"warm": True, "seconds": round(time.perf_counter() - started, 3)}


def warmup_endpoint(
    registry: Registry,
    warm_model: Callable[[], object],
    new_agent: Callable[[Model], Agent],
    caps: TurnCaps,
) -> Callable[[Request], Awaitable[JSONResponse]]:
    """The route's handler: 200 once the turn ran, 500 naming what failed."""

    async def warmup(request: Request) -> JSONResponse:
        try:
            return JSONResponse(await warm_up(registry, warm_model, new_agent, caps))
        except Exception as failure:
            return JSONResponse(
                {"warm": False, "error": f"{type(failure).__name__}: {failure}"}, status_code=500
            )

    return warmup
