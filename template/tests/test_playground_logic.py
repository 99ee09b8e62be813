"""The playground page's wire logic (playground/page/welt.js), checked against Welt's shapes.

The page must show what Welt will show, so each rule it applies is
checked here without a browser, by Node.js running the page's own module:
how a reason renders and when Welt drops it to its default buttons, what
a turn resends, how files are encoded and bounded, a thread's session id,
what a resume carries, and how a text reads (mentions by name, emoji).
Skipped, saying so, where Node.js is missing.
"""

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

import pytest
from conftest import PROJECT

from playground.server import people

NODE = shutil.which("node")
MODULE = PROJECT / "playground" / "page" / "welt.js"

# One Node.js process for the module: each line in is a call (or names a constant), each
# line out its result (or the constant's value).
HARNESS = """
import * as welt from MODULE;
import { createInterface } from "node:readline";
for await (const line of createInterface({ input: process.stdin })) {
  const [name, args] = JSON.parse(line);
  let out;
  try {
    if (!(name in welt)) throw new Error(`welt.js exports no ${name}`);
    out = { value: typeof welt[name] === "function" ? welt[name](...args) : welt[name] };
  } catch (error) {
    out = { error: String(error) };
  }
  process.stdout.write(JSON.stringify(out) + "\\n");
}
""".replace("MODULE", json.dumps(MODULE.as_uri()))


@pytest.fixture(scope="module")
def node() -> Iterator[subprocess.Popen[str]]:
    if NODE is None:
        pytest.skip("Node.js is not installed: the page's logic runs in it")
    process = subprocess.Popen(
        [NODE, "--input-type=module", "-e", HARNESS],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    yield process
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture
def welt(node):
    """Call a function of welt.js with JSON arguments; its JSON result (a constant: its value)."""

    def call(name: str, *args: Any) -> Any:
        assert node.stdin is not None and node.stdout is not None
        node.stdin.write(json.dumps([name, list(args)]) + "\n")
        node.stdin.flush()
        out = json.loads(node.stdout.readline())
        assert "error" not in out, out["error"]
        return out.get("value")

    return call


APPROVE = {"value": True, "label": "Approve", "style": "primary"}
REJECT = {"value": False, "label": "Reject", "style": "danger"}


# Reasons -----------------------------------------------------------------------------


def test_a_structured_reason_renders_its_message_buttons_and_field(welt):
    reason = {
        "message": "Deploy to prod?",
        "options": [{"value": "go", "label": "Deploy", "style": "primary"}, {"value": "no"}],
        "input": {"label": "Or say why not", "multiline": True},
    }

    shown = welt("question", reason)

    assert shown["text"] == "Deploy to prod?"
    assert shown["buttons"] == [
        {"value": "go", "label": "Deploy", "style": "primary"},
        {"value": "no", "label": "no", "style": None},
    ]
    assert shown["input"] == {"label": "Or say why not", "multiline": True}
    assert shown["fellBack"] is None


def test_approve_and_reject_come_first_in_welts_words_unless_the_reason_says_others(welt):
    reason = {
        "message": "Go?",
        "approve": {"label": "Ship it"},
        "reject": {},
        "options": [{"value": 3}],
    }

    buttons = welt("question", reason)["buttons"]

    assert buttons == [
        {"value": True, "label": "Ship it", "style": "primary"},
        REJECT,
        {"value": 3, "label": "3", "style": None},
    ]


def test_a_text_field_alone_gets_no_default_buttons_and_is_labelled_answer(welt):
    shown = welt("question", {"message": "Which city?", "input": {}})

    assert shown["buttons"] == []
    assert shown["input"] == {"label": "Answer", "multiline": False}


def test_a_message_alone_gets_welts_default_buttons_and_says_why(welt):
    shown = welt("question", {"message": "Carry on?"})

    assert shown["buttons"] == [APPROVE, REJECT]
    assert shown["input"] is None
    assert "declares no buttons and no text field" in shown["fellBack"]


def test_a_plain_text_reason_is_its_text_with_the_default_buttons(welt):
    shown = welt("question", "Delete the branch?")

    assert shown["text"] == "Delete the branch?"
    assert shown["buttons"] == [APPROVE, REJECT]
    assert "plain text" in shown["fellBack"]


# Each breaks Welt's all-or-nothing match in one place: (reason, what the page says).
UNMATCHED = {
    "an unknown key": ({"message": "Go?", "options": [{"value": 1}], "urgent": True}, '"urgent"'),
    "an unknown key inside input": (
        {"message": "City?", "input": {"label": "City", "placeholder": "Oslo"}},
        '"placeholder"',
    ),
    "a style Welt lacks": (
        {"message": "Go?", "options": [{"value": 1, "style": "secondary"}]},
        "options[0].style",
    ),
    "a null style": ({"message": "Go?", "options": [{"value": 1, "style": None}]}, "style"),
    "an empty message": ({"message": "", "input": {}}, "message"),
    "no message": ({"options": [{"value": 1}]}, 'no "message"'),
    "an option without a value": ({"message": "Go?", "options": [{"label": "Go"}]}, "value"),
    "an empty string value and no label": ({"message": "Go?", "options": [{"value": ""}]}, "label"),
    "multiline not a boolean": ({"message": "Notes?", "input": {"multiline": 1}}, "multiline"),
    "26 options": ({"message": "Pick", "options": [{"value": n} for n in range(26)]}, "26"),
    "approve, reject and 24 options": (
        {
            "message": "Pick",
            "approve": {},
            "reject": {},
            "options": [{"value": n} for n in range(24)],
        },
        "26 buttons",
    ),
    "a value over 1800 characters of JSON": (
        {"message": "Go?", "options": [{"value": "x" * 1799}]},
        "1801 characters",
    ),
    "an option answering as approve does": (
        {"message": "Go?", "approve": {}, "options": [{"value": True, "label": "Yes!"}]},
        "as the approve button does",
    ),
}


@pytest.mark.parametrize(("reason", "why"), UNMATCHED.values(), ids=UNMATCHED.keys())
def test_a_reason_welt_does_not_match_is_json_with_the_default_buttons_and_says_why(
    welt, reason, why
):
    shown = welt("question", reason)

    assert shown["buttons"] == [APPROVE, REJECT]
    assert shown["input"] is None
    assert shown["text"].startswith("```\n{")
    assert "Welt did not match this reason" in shown["fellBack"]
    assert why in shown["fellBack"]


def test_twenty_five_buttons_still_match(welt):
    reason = {"message": "Pick", "options": [{"value": n} for n in range(25)]}

    assert welt("question", reason)["fellBack"] is None


def test_questions_of_one_stop_share_welts_markdown_budget(welt):
    long = {"message": "x" * 9000, "input": {}}

    one, two = welt("stop", [{"id": "a", "name": "n", "reason": long}] * 2)

    assert len(one["text"]) == len(two["text"]) == 6000
    assert one["text"].endswith("…")


def test_a_long_button_label_is_clipped_as_slack_clips_it(welt):
    reason = {"message": "Pick", "options": [{"value": 1, "label": "L" * 80}]}

    (button,) = welt("question", reason)["buttons"]

    assert button["label"] == "L" * 74 + "…"


# Answers and resumes ---------------------------------------------------------------------


def answered(question_id: str, value: Any, source: str, user: str | None, at: int) -> dict:
    return {
        "id": question_id,
        "answer": {"value": value, "source": source, "userId": user, "at": at},
    }


def test_a_stop_resumes_only_once_every_question_is_answered(welt):
    questions = [answered("a", True, "option", "slack:T:UBOB", 1), {"id": "b", "answer": None}]

    assert welt("resume", questions) is None


def test_a_resume_carries_every_answer_and_the_identity_of_whoever_answered_last(welt):
    questions = [
        answered("a", "Oslo", "input", "slack:T:UALICE", 2),
        answered("b", False, "option", "slack:T:UBOB", 1),
    ]

    resume = welt("resume", questions)

    assert resume["payload"] == {
        "interrupt_responses": {
            "a": {"value": "Oslo", "source": "input"},
            "b": {"value": False, "source": "option"},
        }
    }
    assert resume["userId"] == "slack:T:UALICE"


def test_the_receipt_reads_as_welts(welt):
    assert welt("receipt", "Approve", "Alice") == "“Approve” — answered by Alice"


@pytest.mark.parametrize(
    ("events", "failed"),
    [
        ([], True),
        ([{"error": "Nothing to resume"}], True),
        ([{"data": ""}, {"error": "boom"}], True),
        ([{"data": "Done."}, {"error": "late"}], False),
        ([{"tool_result": {"toolUseId": "t", "status": "success"}}], False),
    ],
)
def test_a_resume_fails_when_it_sends_nothing_or_starts_with_an_error(welt, events, failed):
    assert welt("resumeFailed", events) is failed


# Threads and what a turn sends ---------------------------------------------------------------


def test_a_session_id_is_welts_slack_thread_id_padded_to_33(welt):
    assert welt("sessionId", "T1", "C1", "1700000000.000100") == "slack_T1_C1_1700000000-000100____"
    assert welt("sessionId", "", "C0123", "1.000001") == "slack_-_C0123_1-000001".ljust(33, "_")


def test_a_thread_ts_is_seconds_and_six_digits(welt):
    assert welt("threadTs", 1_700_000_000_123, 7) == "1700000000.123007"


USER = "slack:T0:UALICE"
BOB = "slack:T0:UBOB"


def test_by_default_every_turn_resends_the_whole_thread_with_each_speakers_mention(welt):
    thread = [
        {"role": "user", "userId": USER, "text": "hi"},
        {"role": "assistant", "text": "Hello."},
        {"role": "user", "userId": BOB, "text": "me too"},
    ]

    sent = welt("turnPayload", thread, False, ["document"])["messages"]

    assert sent == [
        {"role": "user", "content": [{"text": "<@UALICE>: hi"}]},
        {"role": "assistant", "content": [{"text": "Hello."}]},
        {"role": "user", "content": [{"text": "<@UBOB>: me too"}]},
    ]


def test_an_agent_keeping_its_history_is_sent_only_what_follows_welts_last_reply(welt):
    thread = [
        {"role": "user", "userId": USER, "text": "hi"},
        {"role": "assistant", "text": "Hello."},
        {"role": "user", "userId": BOB, "text": "me too"},
        {"role": "user", "userId": USER, "text": "and me"},
    ]

    sent = welt("turnPayload", thread, True, [])["messages"]

    assert [message["content"][0]["text"] for message in sent] == [
        "<@UBOB>: me too",
        "<@UALICE>: and me",
    ]


def test_a_thread_never_starts_or_ends_on_welts_reply_nor_sends_an_empty_one(welt):
    thread = [
        {"role": "assistant", "text": "Earlier."},
        {"role": "user", "userId": USER, "text": "hi"},
        {"role": "assistant", "text": "  "},
        {"role": "user", "userId": USER, "text": "again"},
        {"role": "assistant", "text": "Stale."},
    ]

    sent = welt("turnPayload", thread, False, [])["messages"]

    assert [message["role"] for message in sent] == ["user", "user"]


def file(name: str, kind: str, size: int = 4, data: str = "AAAA") -> dict:
    return {"name": name, "type": kind, "size": size, "base64": data}


def test_documents_go_before_the_text_and_images_after_it_with_base64_bytes(welt):
    thread = [
        {
            "role": "user",
            "userId": USER,
            "text": "look",
            "files": [file("photo.png", "image/png"), file("costs May.csv", "text/csv")],
        }
    ]

    (message,) = welt("turnPayload", thread, False, ["image", "document"])["messages"]

    assert message["content"] == [
        {"document": {"format": "csv", "name": "costs May-csv", "source": {"bytes": "AAAA"}}},
        {"text": "<@UALICE>: look"},
        {"image": {"format": "png", "source": {"bytes": "AAAA"}}},
    ]


def test_two_documents_of_one_name_are_named_apart(welt):
    files = [file("a.txt", "text/plain"), file("a.txt", "text/plain")]
    thread = [{"role": "user", "userId": USER, "text": "two", "files": files}]

    (message,) = welt("turnPayload", thread, False, ["document"])["messages"]

    names = [block["document"]["name"] for block in message["content"] if "document" in block]
    assert names == ["a-txt", "a-txt (2)"]


def test_documents_past_five_leave_the_oldest_out(welt):
    thread = [
        {"role": "user", "userId": USER, "text": str(n), "files": [file(f"d{n}.txt", "text/plain")]}
        for n in range(6)
    ]

    result = welt("turnPayload", thread, False, ["document"])

    assert [len(message["content"]) for message in result["messages"]] == [1, 2, 2, 2, 2, 2]
    assert [each["name"] for each in result["unsent"]] == ["d0.txt"]


@pytest.mark.parametrize(
    ("sent", "modalities", "why"),
    [
        (file("big.pdf", "application/pdf", size=4_718_593), ["document"], "over 4718592 bytes"),
        (file("tool.exe", "application/x-msdownload"), ["document"], "no file of type"),
        (file("clip.mp4", "video/mp4"), ["image", "document"], "leaves out video"),
    ],
)
def test_a_file_welt_would_not_send_is_left_out_and_said_why(welt, sent, modalities, why):
    thread = [{"role": "user", "userId": USER, "text": "see", "files": [sent]}]

    result = welt("turnPayload", thread, False, modalities)

    assert result["messages"][0]["content"] == [{"text": "<@UALICE>: see"}]
    assert why in welt("fileProblem", sent, modalities)


def test_a_document_name_keeps_only_what_converse_takes(welt):
    assert welt("documentName", "Q3 report (final).v2.pdf") == "Q3 report (final)-v2-pdf"
    assert welt("documentName", "***") == "---"
    assert welt("documentName", "") == "document"


# The reply stream ---------------------------------------------------------------------------


def test_server_sent_events_are_read_whole_and_a_partial_line_waits(welt):
    parsed = welt(
        "sseEvents", 'data: {"data": "a"}\n\ndata: not json\ndata: {"data": "b"}\ndata: {"da'
    )

    assert parsed == {"events": [{"data": "a"}, {"data": "b"}], "rest": 'data: {"da'}


@pytest.mark.parametrize(
    ("event", "kind"),
    [
        ({"data": "hi"}, "text"),
        ({"data": ""}, None),
        ({"current_tool_use": {"name": "t", "toolUseId": "1"}}, "tool"),
        ({"tool_result": {"toolUseId": "1", "status": "error"}}, "tool_result"),
        ({"file": {"name": "a.csv", "bytes": "YQ=="}}, "file"),
        ({"file": {"name": "", "bytes": "YQ=="}}, None),
        ({"interrupt": {"id": "i", "name": "n", "reason": "r"}}, "interrupt"),
        ({"error": "boom"}, "error"),
        ({"result": "anything else"}, None),
    ],
)
def test_the_page_renders_exactly_the_events_welt_renders(welt, event, kind):
    rendered = welt("rendered", event)

    assert (rendered or {}).get("kind") == kind


TOOL_1 = {"current_tool_use": {"name": "change", "toolUseId": "t1"}}
TOOL_2 = {"current_tool_use": {"name": "read", "toolUseId": "t2"}}
RETURNED_2 = {"tool_result": {"toolUseId": "t2", "status": "success"}}
ASKED = {"interrupt": {"id": "i1", "name": "gate", "reason": "Go?"}}


def test_a_call_in_a_reply_that_asks_waits_on_the_question_until_it_returns(welt):
    assert welt("waitingCalls", [TOOL_1, TOOL_2, RETURNED_2, ASKED]) == ["t1"]


def test_no_call_waits_in_a_reply_that_asks_nothing(welt):
    assert welt("waitingCalls", [TOOL_1, {"data": "Done."}]) == []


def test_markdown_is_escaped_before_it_is_rendered(welt):
    html = welt("markdown", "**bold** <script>alert(1)</script> `x<y` <@UALICE>")

    assert "<strong>bold</strong>" in html
    assert "<script>" not in html
    assert "<code>x&lt;y</code>" in html
    assert '<span class="mention">@UALICE</span>' in html


# What Slack shows of a text: mentions by name, shortcodes as emoji ---------------------------

# The playground's own cast, as /config sends it.
CAST = [asdict(person) for person in people([])]
SHORTCODE = re.compile(r":[a-z0-9_+-]+:")


def test_the_cast_names_each_person_with_a_user_id_by_their_slack_user(welt):
    assert welt("displayNames", CAST) == {"UALICE": "Alice", "UBOB": "Bob", "UAVERY": "Avery"}


def test_a_mention_of_someone_in_the_cast_shows_their_name(welt):
    html = welt("markdown", "<@UBOB>'s answer was not taken", welt("displayNames", CAST))

    assert html == '<p><span class="mention">@Bob</span>\'s answer was not taken</p>'


def test_a_mention_of_someone_outside_the_cast_shows_their_id_as_slack_does(welt):
    html = welt("markdown", "<@UZED> asked", welt("displayNames", CAST))

    assert html == '<p><span class="mention">@UZED</span> asked</p>'


def test_a_name_shows_as_plain_text_never_as_markup(welt):
    html = welt("markdown", "<@UEVE>", {"UEVE": "<b>*Eve*</b>"})

    assert html == '<p><span class="mention">@&lt;b&gt;*Eve*&lt;/b&gt;</span></p>'


@pytest.mark.parametrize("notice", ["REPLY_FAILURE", "RESUME_FAILURE"])
def test_every_shortcode_of_welts_notices_shows_as_its_emoji(welt, notice):
    text = welt(notice)

    html = welt("markdown", text)

    assert SHORTCODE.search(text)
    assert not SHORTCODE.search(html)
    assert html.startswith("<p>⚠️ ")


@pytest.mark.parametrize(
    ("text", "html"),
    [
        (":warning: careful", "<p>⚠️ careful</p>"),
        ("- deployed :white_check_mark:", "<ul><li>deployed ✅</li></ul>"),
        ("> :x: not this", "<blockquote>❌ not this</blockquote>"),
    ],
)
def test_a_shortcode_the_page_knows_shows_as_its_emoji_in_any_text(welt, text, html):
    assert welt("markdown", text) == html


@pytest.mark.parametrize("text", [":party_parrot:", ":constructor:", "at 10:30:45"])
def test_a_shortcode_the_page_does_not_know_stays_as_typed(welt, text):
    assert welt("markdown", text) == f"<p>{text}</p>"


def test_a_shortcode_in_code_stays_as_typed(welt):
    assert welt("markdown", "`:warning:`") == "<p><code>:warning:</code></p>"


# Links: each opens in a tab of its own, as Slack opens one -----------------------------------

# A consent link's state is base64url: _ and - in it must not read as emphasis.
CONSENT = "http://127.0.0.1:8092/connect?state=eyJ1c2VyIjo-_a-b_.0f3a"


@pytest.mark.parametrize(
    "text",
    [
        f"<{CONSENT}|Connect GitHub as you>",  # Slack's mrkdwn
        f"[Connect GitHub as you]({CONSENT})",  # Markdown
    ],
)
def test_a_link_with_a_text_shows_the_text_and_opens_a_new_tab(welt, text):
    html = welt("markdown", text)

    assert html == (
        f'<p><a href="{CONSENT}" target="_blank" rel="noopener">Connect GitHub as you</a></p>'
    )


@pytest.mark.parametrize("text", [f"<{CONSENT}>", CONSENT])
def test_a_link_without_a_text_shows_its_url_whole(welt, text):
    html = welt("markdown", text)

    assert html == f'<p><a href="{CONSENT}" target="_blank" rel="noopener">{CONSENT}</a></p>'


def test_a_bare_url_ends_before_the_punctuation_that_ends_its_sentence(welt):
    html = welt("markdown", f"Open {CONSENT}, then press Done.")

    assert html.startswith(f'<p>Open <a href="{CONSENT}" ')
    assert html.endswith("</a>, then press Done.</p>")


def test_a_link_keeps_its_query_escaped_and_whole(welt):
    html = welt("markdown", "<https://example.com/a?b=1&c=2|both>")

    assert html == (
        '<p><a href="https://example.com/a?b=1&amp;c=2" target="_blank" rel="noopener">both</a></p>'
    )


def test_only_an_http_or_https_url_becomes_a_link(welt):
    html = welt("markdown", "<javascript:alert(1)|x> [y](javascript:alert(1)) ftp://a.b/c")

    assert "<a " not in html


def test_a_quote_after_a_url_ends_it_and_stays_text(welt):
    html = welt("markdown", '"http://a.b/"onclick="alert(1)')

    assert html == (
        '<p>&quot;<a href="http://a.b/" target="_blank" rel="noopener">http://a.b/</a>'
        "&quot;onclick=&quot;alert(1)</p>"
    )
