"""Answers checked against the questions they answer: the one rule the schema cannot say.

welt-io-strands hands a tool the value of an answer alone, so which widget
gave it is checked here, before the run is claimed: typed text posing as a
button press, a value no button offered, or a null would otherwise reach
the tool as if a person had pressed the button.
"""

import json
from typing import Any

from .payload import WeltAnswer, shown_text

# Welt renders at most this many buttons, each value at most this long as
# JSON; past either, it shows its default buttons instead.
MAX_BUTTONS = 25
MAX_BUTTON_VALUE = 1800
# The keys Welt reads; one more anywhere and it renders its default buttons.
_REASON_KEYS = frozenset({"message", "options", "approve", "reject", "input"})
_OPTION_KEYS = frozenset({"value", "label", "style"})
_DECISION_KEYS = frozenset({"label", "style"})
_INPUT_KEYS = frozenset({"label", "multiline"})
_STYLES = frozenset({"primary", "danger"})
# What Welt's approve and reject buttons answer.
_DECISIONS = {"approve": True, "reject": False}


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
        return f"{_listed(unknown)} is not a question this run asked"
    missing = sorted(set(questions) - set(answers))
    if missing:
        return f"{_listed(missing)} still needs an answer"
    for interrupt_id, answer in answers.items():
        problem = _answer_problem(questions[interrupt_id], answer)
        if problem:
            return (
                f"the answer to {shown_text(interrupt_id)} was refused: {problem}. "
                "The question is still open"
            )
    return None


def _listed(interrupt_ids: list[str], most: int = 3) -> str:
    """Ids as a refusal names them: the first few, each shown as far as SHOWN_OF_AN_ID."""
    shown = ", ".join(shown_text(interrupt_id) for interrupt_id in interrupt_ids[:most])
    more = len(interrupt_ids) - most
    return f"{shown} and {more:,} more" if more > 0 else shown


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
            typed = shown_text(repr(value))
            return f"typed text {typed} is a button's value; press the button instead"
        return None
    if _as_json(value) not in {_as_json(button) for button in buttons}:
        return "the answer is not the value of any of this question's buttons"
    return None


def _widgets(reason: Any) -> tuple[list[object], bool]:
    """The values the question's buttons answer, and whether it has a text field.

    Read as Welt renders the reason: a structured reason shows what it
    declares; anything else (a string, a reason with one unknown key or
    malformed field at any depth, more buttons or longer values than Welt
    renders), or a structured reason that declares nothing, gets Welt's
    default Approve and Reject buttons, which answer True and False.
    """
    declared = _declared_widgets(reason)
    if declared is None or declared == ([], False):
        return [True, False], False
    return declared


def _declared_widgets(reason: Any) -> tuple[list[object], bool] | None:
    """The widgets of a reason Welt matches, all or nothing; None when it falls back."""
    if not isinstance(reason, dict) or not set(reason) <= _REASON_KEYS:
        return None
    message = reason.get("message")
    if not isinstance(message, str) or not message:
        return None
    if "input" in reason and not _well_formed(reason["input"], _INPUT_KEYS, multiline=True):
        return None
    decisions = [value for key, value in _DECISIONS.items() if key in reason]
    if not all(_well_formed(reason[key], _DECISION_KEYS) for key in _DECISIONS if key in reason):
        return None
    options = reason.get("options", [])
    if "options" in reason and not (isinstance(options, list) and options):
        return None
    if not all(_option_renders(option) for option in options):
        return None
    values = [option["value"] for option in options]
    if len(decisions) + len(values) > MAX_BUTTONS:
        return None
    if any(isinstance(value, bool) and value in decisions for value in values):
        return None  # two buttons would answer the same
    return decisions + values, "input" in reason


def _well_formed(spec: Any, keys: frozenset[str], multiline: bool = False) -> bool:
    """An `input`, `approve` or `reject` spec as Welt takes it: known keys, good values."""
    if not isinstance(spec, dict) or not set(spec) <= keys:
        return False
    label = spec.get("label", "-")
    style = spec.get("style", "primary")
    return (
        isinstance(label, str)
        and bool(label)
        and style in _STYLES
        and (not multiline or isinstance(spec.get("multiline", False), bool))
    )


def _option_renders(option: Any) -> bool:
    """A button Welt renders: a value short enough, a label (its own or the value's), a style."""
    if not isinstance(option, dict) or not set(option) <= _OPTION_KEYS or "value" not in option:
        return False
    value = option["value"]
    shown = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if len(shown) > MAX_BUTTON_VALUE:
        return False
    label = option.get("label", value if isinstance(value, str) else shown)
    return isinstance(label, str) and bool(label) and option.get("style", "primary") in _STYLES


def _as_json(value: Any) -> str:
    """Compare answers as JSON: in Python, True == 1, but no button answering 1 is Approve."""
    return json.dumps(value, sort_keys=True)
