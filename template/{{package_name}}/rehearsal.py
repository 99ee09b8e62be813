"""Rehearsal: the real tools, gate and wire, driven by a script instead of a model.

Connecting Welt before paying for a model (or before AWS credentials exist)
shows whether the Slack side works end to end: streamed text, a tool's
indicator, a question with a text field, a file upload when the agent has
write_document, and the resume. Set MODEL_PROVIDER=rehearsal; it is never
the default, and every first reply says that no model is in use.
"""

from .scripted_model import ScriptedModel, call, reply, use

NOTICE = "**Rehearsal mode: no model is in use; every reply is scripted.**"
FINISHED = "Rehearsal done: everything above went over the wire."


class RehearsalModel(ScriptedModel):
    """Answers each user message with the same short script, using the tools it is offered."""

    records_requests = False

    def next_turn(self, messages: list[dict], tool_specs: list[dict] | None = None) -> list[dict]:
        offered = {spec["name"] for spec in tool_specs or []}
        step = _tool_results_since_the_last_user_text(messages)
        if step == 0:
            return use(
                call(
                    "ask_human",
                    "rehearsal-question",
                    question="Rehearsal: type anything to check that typed answers arrive.",
                ),
                before=NOTICE + "\n\nFirst, a question for you.",
            )
        if step == 1 and "write_document" in offered:
            return use(
                call(
                    "write_document",
                    "rehearsal-file",
                    title="Rehearsal",
                    markdown="# Rehearsal\n\nIf this file is in the thread, uploads work.\n",
                )
            )
        return reply(FINISHED)


def _tool_results_since_the_last_user_text(messages: list[dict]) -> int:
    count = 0
    for message in reversed(messages):
        blocks = message.get("content", [])
        if message.get("role") == "user" and any("text" in block for block in blocks):
            break
        count += sum("toolResult" in block for block in blocks)
    return count
