"""Answers checked against the questions they answer: the one rule the schema cannot say.

welt-io-strands hands a tool the value of an answer alone, so which widget
gave it is checked here, before the run is claimed: typed text posing as a
button press, a value no button offered, or a null would otherwise reach
the tool as if a person had pressed the button.
"""

import json
from typing import Any

from .payload import WeltAnswer

# Welt renders at most this many buttons, each value at most this long as
# JSON; past either, it shows its default buttons instead.
MAX_BUTTONS = 25
MAX_BUTTON_VALUE = 1800


def answers_problem(questions: dict[str, Any], answers: dict[str, WeltAnswer]) -> str | None:
    """Why these answers cannot resume the run that asked these questions, or None if they can.

    The one place an answer is checked against its question (the schema has
    already checked its shape). Welt sends answers only once every question
    is answered, so an unknown or a missing id is refused whole. welt-io-strands
    hands a tool the value alone, so the widget it came from is checked here:
    a button press must carry a value one of the question's buttons declares;
    typed text must go to a question with a text field, and must not equal a
    button's value, or typing "Approve" would press it. A null answers
    nothing: Strands would take it for "not answered yet" and ask again.
    A refused answer loses nothing: the run keeps waiting for a good one.
    """
    unknown = sorted(set(answers) - set(questions))
    if unknown:
        return f"{', '.join(unknown)} is not a question this run asked"
    missing = sorted(set(questions) - set(answers))
    if missing:
        return f"{', '.join(missing)} still needs an answer"
    for interrupt_id, answer in answers.items():
        problem = _answer_problem(questions[interrupt_id], answer)
        if problem:
            return (
                f"the answer to {interrupt_id} was refused: {problem}. The question is still open"
            )
    return None


def _answer_problem(reason: Any, answer: WeltAnswer) -> str | None:
    value, source = answer["value"], answer["source"]
    if value is None:
        return "a null answer answers nothing; press a button or type a reply"
    buttons, takes_text = _widgets(reason)
    if source == "input":
        if not takes_text:
            return "this question has no text field, so typed text cannot answer it"
        if not isinstance(value, str):
            return "typed text must be a string"
        if value in [button for button in buttons if isinstance(button, str)]:
            return f"typed text {value!r} is a button's value; press the button instead"
        return None
    if _as_json(value) not in {_as_json(button) for button in buttons}:
        return "the answer is not the value of any of this question's buttons"
    return None


def _widgets(reason: Any) -> tuple[list[object], bool]:
    """The values the question's buttons answer, and whether it has a text field.

    Read as Welt renders the reason: a structured reason shows what it
    declares; anything else (a string, a reason with an unknown key, more
    buttons or longer values than Welt renders), or a structured reason that
    declares nothing, gets Welt's default Approve and Reject buttons, which
    answer True and False.
    """
    options = reason.get("options", []) if isinstance(reason, dict) else []
    structured = (
        isinstance(reason, dict)
        and isinstance(reason.get("message"), str)
        and set(reason) <= {"message", "options", "approve", "reject", "input"}
        and isinstance(options, list)
        and all(isinstance(option, dict) and "value" in option for option in options)
        and len(options) <= MAX_BUTTONS
        and all(len(_as_json(option["value"])) <= MAX_BUTTON_VALUE for option in options)
    )
    if not structured:
        return [True, False], False
    buttons = [option["value"] for option in options]
    buttons += [True] * ("approve" in reason) + [False] * ("reject" in reason)
    takes_text = "input" in reason
    return (buttons, takes_text) if buttons or takes_text else ([True, False], False)


def _as_json(value: Any) -> str:
    """Compare answers as JSON: in Python, True == 1, but no button answering 1 is Approve."""
    return json.dumps(value, sort_keys=True)
