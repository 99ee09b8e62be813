"""Rehearsal: the real gate, wire and storage, driven by a script instead of a model.

Connecting Welt before paying for a model (or before AWS credentials exist)
shows whether the Slack side works end to end: streamed text, a tool's
indicator, a question with a text field, a draft to approve, a file upload,
and the resumes. The script asks through rehearsal's own tools
(rehearsal_tools.py), so it plays the same whatever yours/ holds; a
message `call <tool>` calls one of yours (rehearsal_scenes.py). Stop the
server while a question is open and start it again before answering: the
run resumes from storage, and the last reply says so. Set
MODEL_PROVIDER=rehearsal; it is never the default, and every first reply
says that no model is in use.
"""

import re

from strands.types.content import Messages
from strands.types.tools import ToolSpec

from ..identity import instance_id
from .rehearsal_scenes import HINT, scene_turn
from .scripted import Event, ScriptedModel, call, reply, use

NOTICE = "**Rehearsal mode: no model is in use; every reply is scripted.**"
FINISHED = "Rehearsal done: everything above went over the wire."
RESTARTED = "The run resumed in a new process, from storage: it outlived a restart."
_ASKED_BY = re.compile(r"\(asked by process ([0-9a-f]+)\)")


class RehearsalModel(ScriptedModel):
    """Answers each user message with the same short script: a question, a draft, a file.

    A message that names a scene (rehearsal_scenes.py) plays that scene instead.
    """

    records_requests = False

    def next_turn(
        self, messages: Messages, tool_specs: list[ToolSpec] | None = None
    ) -> list[Event]:
        scene = scene_turn(messages, tool_specs or [])  # a message that names a scene
        if scene is not None:
            return scene
        steps = [_question(), _report(), _file()]
        done = _tool_results_since_the_last_user_text(messages)
        if done == 0:
            return use(steps[0], before=NOTICE + HINT + "\n\nFirst, a question for you.")
        if done < len(steps):
            return use(steps[done])
        return reply(FINISHED + _restart_note(messages))


def _question() -> list[Event]:
    return call(
        "rehearsal_question",
        "rehearsal-question",
        question=(
            "Rehearsal: type anything to check that typed answers arrive. To see a run "
            "outlive a restart, stop the server and start it again before you answer. "
            f"(asked by process {instance_id()})"
        ),
    )


def _report() -> list[Event]:
    return call(
        "rehearsal_draft",
        "rehearsal-report",
        title="Rehearsal",
        body="If this file is in the thread, the draft you approved is the one published.",
    )


def _file() -> list[Event]:
    return call("rehearsal_file", "rehearsal-file")


def _restart_note(messages: Messages) -> str:
    """Whether this run's question was asked by another process than the one finishing it."""
    for message in _since_the_last_user_text(messages):
        for block in message.get("content", []):
            asked = _ASKED_BY.search(str(block.get("toolUse", {}).get("input", "")))
            if asked and asked.group(1) != instance_id():
                return " " + RESTARTED
    return ""


def _tool_results_since_the_last_user_text(messages: Messages) -> int:
    return sum(
        "toolResult" in block
        for message in _since_the_last_user_text(messages)
        for block in message.get("content", [])
    )


def _since_the_last_user_text(messages: Messages) -> Messages:
    """This run's messages: with history, earlier turns are in the list too."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        blocks = message.get("content", [])
        if message.get("role") == "user" and any("text" in block for block in blocks):
            return messages[index + 1 :]
    return messages
