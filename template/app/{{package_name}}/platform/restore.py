"""What must differ between instances restored from one AgentCore V2 snapshot, drawn per request.

On platform V2, AgentCore imports this app once, posts its warm-up,
snapshots the process at the first healthy /ping, and restores that
snapshot for every new session. Whatever memory held by then is the same in
every instance: module state, and the state of Python's `random`.
`os.urandom`, `secrets` and `uuid.uuid4` read the kernel, which reseeds
itself after a restore; `random` does not, so every instance would draw the
same numbers: trace and span ids (OpenTelemetry's generators, the X-Ray one
that AgentCore's distro installs included, call `random.getrandbits`),
botocore's retry jitter, Strands' ids for direct tool calls.

There is no after-restore hook, and an instance cannot tell that it was
restored: its PID is 1 and its hostname `localhost` in every instance,
`time.monotonic()` does not advance across a restore, and a flag set before
the snapshot ("reseeded already") is set in every instance. So `random`
is reseeded from os.urandom at the start of every request, /ping included
(FreshRandomness): `random.seed(os.urandom(32))` costs about 8
microseconds (measured on Python 3.12 and 3.13), less than parsing the
request's headers. Code that wants a repeatable sequence keeps its own
`random.Random(seed)`, which nothing else draws from.

An id of the instance follows the same rule the other way round: drawn once,
at the first request, and kept (`instance_id`, in identity.py, where code
below the platform can reach it).
"""

import os
import random
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send


def fresh_randomness() -> None:
    """Reseed Python's `random` from the kernel: new numbers in every restored instance."""
    random.seed(os.urandom(32))


class FreshRandomness:
    """ASGI middleware: `random` reseeded before anything in the request draws from it.

    main.py adds it last, which makes it the outermost middleware, so the
    reseed comes before the server span that AgentCore's OpenTelemetry
    instrumentation opens around each request, not just before the agent's.
    """

    def __init__(self, app: "ASGIApp") -> None:
        self.app = app

    async def __call__(self, scope: "Scope", receive: "Receive", send: "Send") -> None:
        if scope["type"] in ("http", "websocket"):
            fresh_randomness()
        await self.app(scope, receive, send)
