"""Tools only rehearsal offers, so that every kind of question can be seen without a model.

A project without the sample tools has no ASK row, no restricted question
and no question with buttons of its own, so a person trying the agent in
rehearsal would never see the gate, which is the heart of the template.
Rehearsal's own script asks through these too, never through a tool of
yours, which you may have changed or deleted.
These rows join the registry only when MODEL_PROVIDER=rehearsal
(factory.py), never beside a real model; rehearsal_scenes.py calls them
when a message names a scene. They live beside the model they serve, not
in tools/, which holds the adapters every agent has. They do nothing
outside this process: each says what it would have done, and how often it
ran for its call, so an approval can be seen to run a tool exactly once.
"""

import json
import struct
import threading
import urllib.error
import urllib.request
import uuid
import zlib
from collections import Counter

from strands import ToolContext, tool
from welt_io_strands import interrupt_reason

from ..acting.user_tokens import UserToken
from ..gate.answerers import ANYONE, APPROVERS, STARTER, answer_to
from ..gate.audit import fingerprint
from ..gate.interrupt_names import interrupt_name
from ..gate.registry import ALLOW, ASK, Row
from ..tools.call_memo import CallMemo

QUESTION = interrupt_name("rehearsal-question")
REVIEW = interrupt_name("rehearsal-review")
CHOICE = interrupt_name("rehearsal-choice")
UNMATCHED = interrupt_name("rehearsal-unmatched")

# The GitHub token of the person who started the run: the playground's
# stand-ins play Identity and GitHub (USER_TOKEN_API_URLS names its API).
GITHUB = UserToken(
    "github", scopes=("read:user",), service="GitHub", api_url="https://api.github.com"
)

# How often each call ran, by toolUseId: a resumed run that ran a tool
# twice would show it here.
_runs: Counter[str] = Counter()
_counting = threading.Lock()


def _ran(tool_context: ToolContext) -> int:
    with _counting:
        _runs[tool_context.tool_use["toolUseId"]] += 1
        return _runs[tool_context.tool_use["toolUseId"]]


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


@tool(context=True)
def rehearsal_question(question: str, tool_context: ToolContext) -> str:
    """Ask anyone in the thread a question with a text field.

    Args:
        question: The question.
    """
    reason = interrupt_reason(question, input={"label": "Your answer", "multiline": True})
    return f"The human answered: {_ask(tool_context, QUESTION, reason)}"


@tool(context=True)
def rehearsal_draft(title: str, body: str, tool_context: ToolContext) -> dict:
    """Draft a report once per call, ask to publish it, and share exactly the draft approved.

    Args:
        title: The report's title.
        body: The report's content, in Markdown.
    """
    memo = CallMemo(tool_context, "rehearsal_draft")
    draft = memo.get_or_make(lambda: _draft(title, body))
    reason = interrupt_reason(
        f"*Publish this report?*\n\n{draft['text']}",
        approve={"label": "Publish", "style": "primary"},
        reject={"label": "Discard"},
        input={"label": "Or say what to change"},
    )
    answer = _ask(tool_context, REVIEW, reason)
    memo.forget()
    if answer is not True:
        said = "discarded it" if answer is False else f"asked for changes: {answer}"
        return {"status": "success", "content": [{"text": f"Not published; the human {said}"}]}
    document = {"format": "md", "name": draft["name"], "source": {"bytes": draft["text"].encode()}}
    return {
        "status": "success",
        "content": [{"text": f"Published {draft['name']}.md"}, {"document": document}],
    }


def _draft(title: str, body: str) -> dict[str, str]:
    """Drafted once per call: a second pass would draw another id and show another text."""
    draft_id = uuid.uuid4().hex[:8]
    return {"name": f"report-{draft_id}", "text": f"# {title}\n\n_Draft {draft_id}_\n\n{body}\n"}


@tool(context=True)
def rehearsal_change(what: str, tool_context: ToolContext) -> str:
    """Pretend to change something; the gate asks anyone in the thread first (an ASK row).

    Args:
        what: What would change.
    """
    return f"Changed {what} (pretend). This call ran {_times(_ran(tool_context))}."


@tool(context=True)
def rehearsal_deploy(target: str, tool_context: ToolContext) -> str:
    """Pretend to deploy; only the person who started the run may approve (ASK, STARTER).

    Args:
        target: Where it would deploy.
    """
    return f"Deployed to {target} (pretend). This call ran {_times(_ran(tool_context))}."


@tool(context=True)
def rehearsal_release(version: str, tool_context: ToolContext) -> str:
    """Pretend to release; only the APPROVERS of the settings may approve (ASK, APPROVERS).

    Args:
        version: The version it would release.
    """
    return f"Released {version} (pretend). This call ran {_times(_ran(tool_context))}."


@tool(context=True)
def rehearsal_choose(question: str, tool_context: ToolContext) -> str:
    """Ask with buttons of the question's own and a text field beside them.

    Args:
        question: The question.
    """
    reason = interrupt_reason(
        question,
        [
            {"value": "small", "label": "Small", "style": "primary"},
            {"value": "large", "label": "Large"},
            # Any JSON is a button's value; Welt sends it back as declared.
            {"value": {"size": 0}, "label": "None", "style": "danger"},
        ],
        input={"label": "Or type a size"},
    )
    answer = _ask(tool_context, CHOICE, reason)
    return f"The human chose {answer!r}."


@tool(context=True)
def rehearsal_unmatched(tool_context: ToolContext) -> str:
    """Ask with a reason Welt does not match, to show what Slack shows instead."""
    # "placeholder" is no key of Welt's reasons: Welt drops the whole reason
    # to its default Approve and Reject, with no text field.
    reason = {
        "message": "Rehearsal: which city? (this reason asks for a text field with a placeholder)",
        "input": {"label": "City", "placeholder": "Oslo"},
    }
    answer = _ask(tool_context, UNMATCHED, reason)
    return f"The answer was {answer!r}: Welt's default buttons answer true or false."


@tool
def rehearsal_file() -> dict:
    """Share a small table and a small image in the thread."""
    table = b"item,count\napples,3\npears,5\n"
    image = {"format": "png", "source": {"bytes": _png(48, 48, (46, 182, 125))}}
    document = {"format": "csv", "name": "rehearsal-table", "source": {"bytes": table}}
    return {
        "status": "success",
        "content": [
            {"text": "Shared rehearsal-table.csv and a green square."},
            {"document": document},
            {"image": image},
        ],
    }


@tool(context=True)
def rehearsal_github(tool_context: ToolContext) -> str:
    """Say who the person who started the run is on GitHub, with their own token (asked for)."""
    token = GITHUB.of_starter(tool_context)
    request = urllib.request.Request(
        f"{GITHUB.api(tool_context)}/user",
        headers={"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answered:
            login = json.load(answered)["login"]
    except urllib.error.HTTPError as refused:
        if refused.code == 401:  # revoked or expired: consent again
            GITHUB.refused(tool_context)
        raise
    return (
        f"You are {login} on GitHub: the token of the person who started this run, "
        "fetched for this call and kept nowhere."
    )


def _ask(tool_context: ToolContext, name: str, reason: dict) -> object:
    shown = fingerprint(tool_context.tool_use.get("input"))
    answer, _ = answer_to(tool_context, name, reason, ANYONE, fingerprint=shown)
    return answer


def _png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A one-colour PNG, written by hand: rehearsal installs no imaging library."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            chunk(b"IHDR", header),
            chunk(b"IDAT", zlib.compress(row * height)),
            chunk(b"IEND", b""),
        ]
    )


ROWS = (
    Row(rehearsal_question, ALLOW),
    Row(rehearsal_draft, ALLOW, files_to_thread=True),
    Row(rehearsal_change, ASK),
    Row(rehearsal_deploy, ASK, answered_by=STARTER),
    Row(rehearsal_release, ASK, answered_by=APPROVERS),
    Row(rehearsal_choose, ALLOW),
    Row(rehearsal_unmatched, ALLOW),
    Row(rehearsal_file, ALLOW, files_to_thread=True),
    Row(rehearsal_github, ALLOW),  # asks for itself: only the starter may connect
)
