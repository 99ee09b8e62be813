"""Instances of one started agent, each as AgentCore Runtime V2 restores them from its snapshot.

V2 starts the agent once, posts its warm-up, snapshots the process, and
restores the snapshot for every new session. This process plays the start:
it sets tracing up as AgentCore's OpenTelemetry distro does (Starlette
instrumented before the app exists, X-Ray ids, which Python's `random`
draws), with the spans kept in memory; it imports main and runs the
warm-up; then it keeps `random`'s state, as the snapshot would. For each
line on its standard input it forks an instance and prints the instance's
pid and port. A fork is a restore but for two things, which the instance
undoes first: CPython reseeds `random` in a forked child, so the child puts
the kept state back, and its os.getpid() answers 1, as in every restored
instance. GET /spans on an instance lists the spans it finished.
"""

import os
import random
import sys

from opentelemetry import trace
from opentelemetry.instrumentation.starlette import StarletteInstrumentor
from opentelemetry.sdk.extension.aws.trace import AwsXRayIdGenerator
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

spans = InMemorySpanExporter()
provider = TracerProvider(id_generator=AwsXRayIdGenerator())
provider.add_span_processor(SimpleSpanProcessor(spans))
trace.set_tracer_provider(provider)
StarletteInstrumentor().instrument()  # before main builds its app, as opentelemetry-instrument

from forking import serve_forks  # noqa: E402
from starlette.responses import JSONResponse  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

import main  # noqa: E402


async def finished_spans(request):
    return JSONResponse(
        [
            {
                "name": span.name,
                "trace": f"{span.context.trace_id:032x}",
                "span": f"{span.context.span_id:016x}",
            }
            for span in spans.get_finished_spans()
        ]
    )


main.app.add_route("/spans", finished_spans)
# deploy/runtime.py's WARMUP_PATH, addressed to this machine as the guard wants (local_only.py)
warm = TestClient(main.app, base_url="http://localhost").post("/warmup")
if warm.status_code != 200:
    sys.exit(f"the warm-up failed: {warm.text}")
spans.clear()  # the warm-up's spans are the snapshot's, in every instance alike
snapshot = random.getstate()


def as_restored() -> None:
    random.setstate(snapshot)  # as restored: the fork reseeded it, a restore does not
    os.getpid = lambda: 1  # every restored instance is PID 1


serve_forks(main.app, as_restored)
