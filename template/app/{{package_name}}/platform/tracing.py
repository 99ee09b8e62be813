"""Strands' OpenTelemetry spans: on AgentCore to Observability, locally off unless asked.

On AgentCore the agent starts under `opentelemetry-instrument` (the
Dockerfile's CMD; the runtime does it for a CodeZip), and
aws-opentelemetry-distro installs the tracer provider that exports to
AgentCore Observability. Strands reads the global provider when the first
agent is built, so this module must not install one there: it would take
the place of AWS's. Locally nothing is exported unless TRACES=console asks
for the spans on stderr.

What `opentelemetry-instrument` does happens before main.py's first line,
in every new session, so it is chosen outside this module:
- It loads every instrumentation it finds installed, and each imports its
  library. pyproject.toml's exclude-dependencies leaves out the ~40 that
  aws-opentelemetry-distro brings but for botocore (the Bedrock calls, with
  the distro's gen_ai attributes), starlette with asgi (the POST
  /invocations span, which reads AgentCore's trace context and baggage
  from the request headers, so the agent's spans join the runtime's trace
  and session), logging (the distro imports it) and threading (Strands
  depends on it).
- OTEL_PYTHON_DISABLED_INSTRUMENTATIONS, in the deployment's variables
  (deploy/runtime.py) and the Dockerfile, turns off three of what is left: the distro's own MCP
  instrumentation (aws_mcp), which imports the whole mcp package even when
  no MCP server is used (Strands' execute_tool spans cover MCP tools);
  threading, which Strands instruments itself when it builds its tracer (a
  second instrumentation only logs a warning); and logging, whose trace
  fields and log format logs.py's JSON lines replace. Setting the variable
  replaces the list the distro defaults to when AGENT_OBSERVABILITY_ENABLED
  is set, which names only instrumentations not installed here.
- OTEL_PYTHON_EXCLUDED_URLS=/ping, in the same two places, keeps
  AgentCore's health checks out of the traces: the runtime polls GET /ping
  all session long, and each poll would be a trace of its own.
"""

import sys

from ..settings import Settings


def start_tracing(settings: Settings) -> None:
    """Print spans to stderr when TRACES=console; otherwise leave tracing to the host."""
    if settings.traces != "console":
        return
    from strands.telemetry import StrandsTelemetry

    StrandsTelemetry().setup_console_exporter(out=sys.stderr)  # stdout may be piped elsewhere
