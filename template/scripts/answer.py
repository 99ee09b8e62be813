"""Answer a question of the agent from the terminal, as Welt's buttons and text field would.

The AgentCore CLI's `agentcore dev "text"` can only start a turn: whatever
it is given becomes a new prompt. Welt resumes a run with
`interrupt_responses`, sent in the same session; `agentcore dev` serves
every request in the session `local-dev-session`, so that is the default
here (--session names another, --url another server).

    uv run python scripts/answer.py <interrupt id> "Oslo"          # typed text
    uv run python scripts/answer.py <interrupt id> true --button   # Approve
    uv run python scripts/answer.py <interrupt id> false --button  # Reject
    uv run python scripts/answer.py <id> "Oslo" --session slack_T1_C1_1700000000.000100 \
        --url http://localhost:8080

The interrupt id is the `id` of the `interrupt` event the agent sent.
Prints the reply's events, one JSON object a line.
"""

import argparse
import json
import sys
import urllib.error
import urllib.request

DEV_SESSION = "local-dev-session"


def answer(url: str, session: str, interrupt_id: str, value: object, source: str) -> list[dict]:
    payload = {"interrupt_responses": {interrupt_id: {"value": value, "source": source}}}
    request = urllib.request.Request(
        f"{url.rstrip('/')}/invocations",
        data=json.dumps(payload).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
            "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id": session,
        },
    )
    with urllib.request.urlopen(request, timeout=300) as reply:
        return [
            json.loads(line.removeprefix(b"data: ")) for line in reply if line.startswith(b"data: ")
        ]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("interrupt_id")
    parser.add_argument("value", help="typed text, or with --button the button's JSON value")
    parser.add_argument("--button", action="store_true", help="press a button: value is JSON")
    parser.add_argument("--session", default=DEV_SESSION, help=f"default: {DEV_SESSION}")
    parser.add_argument("--url", default="http://localhost:8080")
    args = parser.parse_args(argv)
    try:
        value = json.loads(args.value) if args.button else args.value
    except json.JSONDecodeError as broken:
        print(
            f"answer.py: --button needs the button's JSON value, such as true "
            f"(got {args.value!r}: {broken})",
            file=sys.stderr,
        )
        return 2
    source = "option" if args.button else "input"
    try:
        events = answer(args.url, args.session, args.interrupt_id, value, source)
    except (urllib.error.URLError, OSError) as failed:
        reason = getattr(failed, "reason", failed)
        print(
            f"answer.py: no agent answered at {args.url} ({reason}): is it running?",
            file=sys.stderr,
        )
        return 2
    for event in events:
        print(json.dumps(event, ensure_ascii=False))
    return 1 if any("error" in event for event in events) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
