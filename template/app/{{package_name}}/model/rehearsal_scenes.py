"""The scenes rehearsal plays when a message names one: every kind of question, on demand.

The default script (rehearsal.py) shows a typed answer, a draft and a file.
Everything else a thread can meet is one word away, so that a person can
see, with no model, what Welt will show: the gate's question on an ASK row,
a question only the starter or the approvers may answer, a question with
buttons of its own, a reason Welt cannot match, two questions in one stop,
a file, the link that connects the starter's own GitHub account, and a
failed reply. `call <tool>` calls any tool of the agent by
name, yours included, with the JSON typed after it as its input or, without
any, placeholders read from its input schema: your own ASK row's question,
seen before any model is connected.
"""

import contextlib
import json
import re
import uuid
from collections.abc import Sequence
from typing import Any

from strands.types.content import Messages
from strands.types.tools import ToolSpec

from .scripted import Event, call, reply, use

HINT = (
    "\n\nTo see one thing at a time, send one of `gate`, `restricted`, `approvers`, "
    "`choice`, `two questions`, `unmatched`, `file`, `draft`, `connect` or `fail`, "
    'or `call <tool>` (`call <tool> {"arg": "value"}`) to call any tool of the agent.'
)

# scene: (what the first reply says, the calls it makes as (tool, input))
SCENES: dict[str, tuple[str, list[tuple[str, dict[str, Any]]]]] = {
    "gate": (
        "`rehearsal_change` has an ASK row, so the gate asks anyone in the thread first. "
        "Approve runs it once; Reject tells the model it was denied.",
        [("rehearsal_change", {"what": "the rehearsal setting"})],
    ),
    "restricted": (
        "Only the person who started this run may approve `rehearsal_deploy` (STARTER): "
        "anyone else's answer is turned away and the question is asked again.",
        [("rehearsal_deploy", {"target": "staging"})],
    ),
    "approvers": (
        "Only the Slack users APPROVERS lists may approve `rehearsal_release`.",
        [("rehearsal_release", {"version": "1.0.0"})],
    ),
    "choice": (
        "A question with buttons of its own and a text field beside them.",
        [("rehearsal_choose", {"question": "Rehearsal: which size?"})],
    ),
    "two questions": (
        "Two questions in one stop: the run resumes once, when both are answered.",
        [
            ("rehearsal_change", {"what": "the first setting"}),
            ("rehearsal_choose", {"question": "Rehearsal: and which size?"}),
        ],
    ),
    "unmatched": (
        "A question whose reason Welt does not match: Slack shows Approve and Reject instead.",
        [("rehearsal_unmatched", {})],
    ),
    "file": ("A table and an image, uploaded to the thread.", [("rehearsal_file", {})]),
    "draft": (
        "`rehearsal_draft` drafts once, however often Strands runs it again: "
        "the draft you approve is the one published.",
        [("rehearsal_draft", {"title": "Rehearsal", "body": "The draft you saw is this one."})],
    ),
    "connect": (
        "`rehearsal_github` acts on GitHub as the person who started this run, with their own "
        "token: until they have connected GitHub, only they may answer the link's question.",
        [("rehearsal_github", {})],
    ),
}
FAIL = "fail"
# What a scene's first reply says, and its calls.
Scene = tuple[str, list[list[Event]]]
_CALL = re.compile(r"call\s+([A-Za-z0-9_-]+)\s*(.*)", re.DOTALL)
_MENTION = re.compile(r"^(?:<@[A-Z0-9]+>:\s*)")


class RehearsalFailure(RuntimeError):
    """The failure the `fail` scene asks for, to show how Welt reports a failed reply."""


def scene_turn(messages: Messages, tool_specs: Sequence[ToolSpec]) -> list[Event] | None:
    """The model turn of the scene the run's message names, or None for the default script."""
    run, text = _this_run(messages)
    if text is None:
        return None
    words = " ".join(text.lower().split())
    scene = _scene(text, words, {spec["name"]: spec for spec in tool_specs})
    if scene is None:
        return None
    if any("toolResult" in block for message in run for block in message.get("content", [])):
        return reply(_what_the_tools_said(run))
    if words == FAIL:
        raise RehearsalFailure("Rehearsal: the model failed on purpose (`fail`).")
    if isinstance(scene, str):  # it cannot play here: say why
        return reply(scene)
    said, asked = scene
    return use(*asked, before=f"Rehearsal: {said}")


def _scene(text: str, words: str, offered: dict[str, ToolSpec]) -> Scene | str | None:
    """The scene's description and calls; a string saying why it cannot play; None if no scene."""
    wanted: list[tuple[str, dict[str, Any]]]
    if words == FAIL:
        return "fail"
    if words in SCENES:
        said, wanted = SCENES[words]
    else:
        called = _CALL.fullmatch(text.strip())
        if called is None:
            return None
        name, typed = called.groups()
        if name not in offered:
            return f"Rehearsal: the agent has no tool named `{name}`. It has: {_names(offered)}."
        try:
            tool_input = json.loads(typed) if typed.strip() else _placeholders(offered[name])
        except json.JSONDecodeError as broken:
            return f"Rehearsal: what follows `call {name}` must be a JSON object ({broken})."
        if not isinstance(tool_input, dict):
            return f"Rehearsal: what follows `call {name}` must be a JSON object."
        said, wanted = f"calling `{name}`, as a model would.", [(name, tool_input)]
    missing = [name for name, _ in wanted if name not in offered]
    if missing:
        return f"Rehearsal: this agent has no `{missing[0]}`, so `{words}` cannot play here."
    return said, [call(name, f"rehearsal-{uuid.uuid4().hex[:12]}", **args) for name, args in wanted]


def _placeholders(spec: ToolSpec) -> dict[str, Any]:
    """An input for each required argument, of its type: what a model would have to make up."""
    schema = spec.get("inputSchema", {}).get("json", {})
    properties = schema.get("properties", {})
    placeholder = {"integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}
    return {
        name: placeholder.get(properties.get(name, {}).get("type"), "rehearsal")
        for name in schema.get("required", [])
    }


def _what_the_tools_said(run: Messages) -> str:
    """The tools' results, as the model was shown them: what ran, and what a denial said."""
    lines = []
    for message in run:
        for block in message.get("content", []):
            result = block.get("toolResult")
            if result is None:
                continue
            texts = [item["text"] for item in result.get("content", []) if "text" in item]
            said = " ".join(texts) or "(no text)"
            with contextlib.suppress(ValueError, KeyError, TypeError):  # a structured error
                said = json.loads(said)["error"]["message"]
            lines.append(f"- {result.get('status', 'success')}: {said}")
    return "Rehearsal: the tools said\n" + "\n".join(lines)


def _this_run(messages: Messages) -> tuple[Messages, str | None]:
    """The run's messages since its user text, and that text without the speaker's mention."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        texts = [block["text"] for block in message.get("content", []) if "text" in block]
        if message.get("role") == "user" and texts:
            return messages[index + 1 :], _MENTION.sub("", texts[-1], count=1)
    return messages, None


def _names(offered: dict[str, ToolSpec]) -> str:
    return ", ".join(f"`{name}`" for name in sorted(offered)) or "no tools"
