"""What the schema check at the door costs, per request and at start-up.

Per request, inside the generated project's environment: wire.payload_problem
against json.loads of the same body (the work the server does for every
request anyway) and against the whole-payload jsonschema check it used
before it remembered messages. Welt resends the whole thread every turn, and
payload_problem checks only the messages this process has not passed
before, so each case is timed twice: at first sight (no message seen) and
resent (the thread's previous turn was checked, so only the last two
messages, the agent's reply and the new user message, are new; for a
one-message thread, the same payload again). Three threads: one user
text; turn 10 of a thread (19 messages); turn 2 of a
thread whose first message carries a 5 MB (raw) document as base64, where
the check's regular expressions have the most to read. Every sample has
messages of its own; the sides alternate; medians. No target: the figures
say how much the check adds to the parsing the server already pays.

At start-up: process start to a healthy /ping, the generated agent against
the bare app, as bench/startup.py measures it; the ratio should not be
worse than docs/performance.md's figure from before the check (0.99).

    uv run python bench/validation.py [start-up runs] [--smoke]   # default 15
    # --smoke: 1 start-up run, 1 sample per case, a 50 KB document
"""

import base64
import json
import os
import subprocess
import sys
import time
from statistics import median
from typing import NamedTuple

PREVIOUS_STARTUP_RATIO = 0.99  # docs/performance.md, before the schema check

MB = 1024 * 1024


class Case(NamedTuple):
    label: str
    turns: int
    document: int  # raw bytes of the document in the first message, or 0
    samples: int


CASES = [
    Case("one user text", 1, 0, 300),
    Case("turn 10 of a thread, 19 messages", 10, 0, 200),
    Case("turn 2 of a thread with a 5 MB document, 3 messages", 2, 5 * MB, 7),
]
SMOKE_CASES = [
    Case("one user text", 1, 0, 1),
    Case("turn 10 of a thread, 19 messages", 10, 0, 1),
    Case("turn 2 of a thread with a 50 KB document, 3 messages", 2, 50 * 1024, 1),
]


def thread(turns: int, tag: str, document: dict | None) -> dict:
    """The payload of a thread's turn: user and assistant alternating, the document in the first."""
    messages = []
    for turn in range(turns):
        content = [{"text": f"<@U0123456>: message {turn + 1} of thread {tag}"}]
        if document and turn == 0:
            content.append(document)
        messages.append({"role": "user", "content": content})
        if turn < turns - 1:
            messages.append(
                {"role": "assistant", "content": [{"text": f"Reply {turn + 1} in {tag}."}]}
            )
    return {"messages": messages}


def new_document(tag: str, size: int) -> dict:
    data = base64.b64encode(os.urandom(size)).decode()
    return {"document": {"format": "pdf", "name": f"Report {tag}", "source": {"bytes": data}}}


def timed(work, *args) -> float:
    start = time.perf_counter()
    result = work(*args)
    elapsed = time.perf_counter() - start
    assert result is None, result
    return elapsed


def per_request(cases: list[Case]) -> None:
    """Runs in the project's environment: each case's sides, alternating, on fresh messages."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match
    from my_welt_agent.wire.payload import SCHEMA, payload_problem

    whole = Draft202012Validator(SCHEMA)

    def whole_check(payload) -> None:
        error = best_match(whole.iter_errors(payload))
        return None if error is None else error.message

    for label, turns, size, samples in cases:
        times = {"json.loads": [], "whole check": [], "first sight": [], "resent": []}
        for sample in range(samples):
            document = new_document(str(sample), size) if size else None
            body = json.dumps(thread(turns, f"{sample}a", document))
            times["json.loads"].append(timed(lambda body=body: json.loads(body) and None))
            times["whole check"].append(timed(whole_check, json.loads(body)))
            times["first sight"].append(timed(payload_problem, json.loads(body)))
            # Another thread, whose previous turn this process has checked.
            earlier = thread(turns - 1, f"{sample}b", document) if turns > 1 else None
            resent = thread(turns, f"{sample}b", document) if earlier else json.loads(body)
            if earlier:
                payload_problem(earlier)
            times["resent"].append(timed(payload_problem, resent))
        ms = {side: median(values) * 1e3 for side, values in times.items()}
        print(f"{label} ({len(body) / 1e6:.3f} MB body), medians of {samples}:")
        print(
            f"  json.loads {ms['json.loads']:.3f} ms; whole-payload check {ms['whole check']:.3f} ms; "
            f"payload_problem at first sight {ms['first sight']:.3f} ms, "
            f"resent {ms['resent']:.3f} ms ({ms['resent'] / ms['json.loads']:.1f}x json.loads, "
            f"{ms['resent'] / ms['whole check']:.2f}x the whole check)"
        )


def main(startup_runs: int, smoke: bool) -> None:
    from _project import rendered_project  # the benchmark's environment only
    from startup import startup_medians

    project = rendered_project()
    env = {**os.environ, "PYTHONPATH": str(project / "app")}
    python = str(project / ".venv" / "bin" / "python")
    measure = [python, __file__, "--per-request", *(["--smoke"] if smoke else [])]
    subprocess.run(measure, cwd=project, env=env, check=True)

    g, b = startup_medians(project, startup_runs)
    print(
        f"start to healthy /ping, median of {startup_runs}: generated {g:.3f}s, bare {b:.3f}s, "
        f"ratio {g / b:.2f} (before the schema check: {PREVIOUS_STARTUP_RATIO:.2f})"
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--per-request"]:
        per_request(SMOKE_CASES if sys.argv[2:] == ["--smoke"] else CASES)
    else:
        from _project import arguments

        given = arguments(__doc__, {"startup_runs": (15, 1)})
        main(given.startup_runs, given.smoke)
