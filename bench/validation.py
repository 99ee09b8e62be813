"""What the schema check at the door costs, per request and at start-up.

Per request, inside the generated project's environment: wire.payload_problem
(the jsonschema check every payload passes) against json.loads of the same
body, the work the server does for every request anyway. Two payloads: one
user text, and a user text with a 5 MB (raw) document as base64, the size
where the check's regular expressions have the most to read. Samples
alternate between the two sides; medians. No target: the figure says how
much the check adds to the parsing the server already pays.

At start-up: process start to a healthy /ping, the generated agent against
the bare app, as bench/startup.py measures it; the ratio should not be
worse than docs/performance.md's figure from before the check (0.99).

    uv run python bench/validation.py [start-up runs]   # default 15
"""

import base64
import json
import os
import subprocess
import sys
import time
from functools import partial
from statistics import median

PREVIOUS_STARTUP_RATIO = 0.99  # docs/performance.md, before the schema check


def bodies() -> dict[str, bytes]:
    text = {"text": "<@U1>: summarise this"}
    document = {
        "document": {
            "format": "pdf",
            "name": "Quarterly report",
            "source": {"bytes": base64.b64encode(os.urandom(5 * 1024 * 1024)).decode()},
        }
    }
    return {
        "one user text": json.dumps({"messages": [{"role": "user", "content": [text]}]}).encode(),
        "5 MB document": json.dumps({"messages": [{"role": "user", "content": [text, document]}]}).encode(),
    }


def alternate(sides: dict, calls: int, samples: int = 15) -> dict[str, float]:
    """Median seconds per call of each side, sampling the sides in turn."""
    times = {side: [] for side in sides}
    for _ in range(samples):
        for side, work in sides.items():
            start = time.perf_counter()
            for _ in range(calls):
                work()
            times[side].append((time.perf_counter() - start) / calls)
    return {side: median(values) for side, values in times.items()}


def per_request() -> None:
    """Runs in the project's environment: payload_problem against json.loads, alternating."""
    from my_welt_agent.wire import payload_problem

    for label, body in bodies().items():
        payload = json.loads(body)
        assert payload_problem(payload) is None, payload_problem(payload)
        sides = {"check": partial(payload_problem, payload), "parse": partial(json.loads, body)}
        seconds = alternate(sides, calls=2000 if len(body) < 10_000 else 1)
        check, parse = seconds["check"], seconds["parse"]
        print(f"{label} ({len(body) / 1e6:.2f} MB body), median of 15: payload_problem "
              f"{check * 1e3:.3f} ms, json.loads {parse * 1e3:.3f} ms, ratio {check / parse:.2f}")


def main(startup_runs: int) -> None:
    from _project import rendered_project  # the benchmark's environment only
    from startup import startup_medians

    project = rendered_project()
    env = {**os.environ, "PYTHONPATH": str(project / "app")}
    python = str(project / ".venv" / "bin" / "python")
    subprocess.run([python, __file__, "--per-request"], cwd=project, env=env, check=True)

    g, b = startup_medians(project, startup_runs)
    print(f"start to healthy /ping, median of {startup_runs}: generated {g:.3f}s, bare {b:.3f}s, "
          f"ratio {g / b:.2f} (before the schema check: {PREVIOUS_STARTUP_RATIO:.2f})")


if __name__ == "__main__":
    if sys.argv[1:] == ["--per-request"]:
        per_request()
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
