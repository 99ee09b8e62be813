"""Strands' OpenTelemetry spans: on AgentCore to Observability, locally off unless asked.

On AgentCore the agent starts under `opentelemetry-instrument` (the
Dockerfile's CMD; the runtime does it for a CodeZip), and
aws-opentelemetry-distro installs the tracer provider that exports to
AgentCore Observability. Strands reads the global provider when the first
agent is built, so this module must not install one there: it would take
the place of AWS's. Locally nothing is exported unless TRACES=console asks
for the spans on stderr.
"""

import sys

from .settings import TRACES


def start_tracing() -> None:
    """Print spans to stderr when TRACES=console; otherwise leave tracing to the host."""
    if not TRACES:
        return
    if TRACES != "console":
        raise SystemExit(f"TRACES={TRACES!r} is not known: set TRACES=console, or leave it unset")
    from strands.telemetry import StrandsTelemetry

    StrandsTelemetry().setup_console_exporter(out=sys.stderr)  # stdout may be piped elsewhere
