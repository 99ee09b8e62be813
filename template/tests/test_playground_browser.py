"""The playground in a real headless browser, against a rehearsal agent `make playground` started.

Each test drives the page as a person would, with the browser's own
clicks and keys, and reads what the page shows, and what went over the
wire, from the page itself. They need Chromium or Chrome (Debian:
`apt-get install chromium`) and skip, saying so, where there is none.
"""

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from cdp import Browser, Page, find_browser
from conftest import free_port
from started_playground import playground_process

from playground.server import ALICE, keeps_history

pytestmark = pytest.mark.slow  # a browser and an agent, each a process

BROWSER = find_browser()
if BROWSER is None:
    pytest.skip(
        "no Chromium or Chrome here (Debian: apt-get install chromium; or set PLAYGROUND_BROWSER)",
        allow_module_level=True,
    )

# Where the screenshots go: the template's docs set them; a project's own run keeps them aside.
SCREENSHOT = os.environ.get("PLAYGROUND_SCREENSHOT")
CONSENT_SCREENSHOT = os.environ.get("CONSENT_SCREENSHOT")


@pytest.fixture(scope="module")
def playground() -> Iterator[str]:
    process, url = playground_process(free_port())
    yield url
    process.terminate()
    process.wait(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert BROWSER is not None
    started = Browser(BROWSER)
    yield started
    started.close()


@pytest.fixture
def page(browser: Browser, playground: str) -> Iterator[Page]:
    opened = browser.page()
    opened.goto(playground)
    opened.wait_for("document.body.dataset.ready === 'true'")
    yield opened
    opened.close()


def say(page: Page, text: str) -> None:
    page.type("#message", text)
    page.press("Enter")


def as_person(page: Page, name: str) -> None:
    options = "[...document.querySelectorAll('#person option')]"
    index = page.evaluate(f"{options}.findIndex((o) => o.text.startsWith({json.dumps(name)}))")
    page.choose("#person", str(index))


def shown(page: Page, text: str) -> str:
    """Wait until the thread shows the text; returns the thread's whole text."""
    return page.wait_for(
        f"document.querySelector('.thread-view:not([hidden])').innerText.includes({json.dumps(text)})"
        " && document.querySelector('.thread-view:not([hidden])').innerText"
    )


def current_session(page: Page) -> str:
    return page.evaluate("document.querySelector('.thread-view:not([hidden])').dataset.session")


def threads_listed(page: Page) -> int:
    return page.evaluate("document.querySelectorAll('#thread-list li').length")


def signed_in_to_slack(tab: Page, name: str, then: str) -> str:
    """On the tab a consent link opened: sign in to Slack as name; the page that says then."""
    button = json.dumps(f"Sign in as {name}")
    tab.wait_across_loads(
        f"[...document.querySelectorAll('button')].some((b) => b.textContent === {button})"
    )
    tab.click("button", f"Sign in as {name}")
    return tab.wait_across_loads(
        f"document.body.innerText.includes({json.dumps(then)}) && document.body.innerText"
    )


def requests(page: Page) -> list[dict]:
    """What the page sent: each request's headers and payload, from its wire view."""
    return page.evaluate(
        """[...document.querySelectorAll('#wire-log > li')].map((li) => ({
            headers: li.querySelector('.headers').textContent,
            payload: JSON.parse(li.querySelector('.payload').textContent),
            events: li.querySelectorAll('.event').length}))"""
    )


def test_a_message_streams_in_and_renders_its_markdown(page):
    say(page, "hi")

    bold = page.wait_for("document.querySelector('.agent-message .text strong')?.textContent")
    shown(page, "First, a question for you.")

    assert bold.startswith("Rehearsal mode")
    (sent,) = requests(page)
    assert sent["payload"]["messages"][0]["content"] == [{"text": "<@UALICE>: hi"}]
    assert sent["events"] >= 3  # the text, the tool's indicator, the question


def test_the_gates_question_approved_by_button_runs_the_tool_once(page):
    say(page, "gate")
    page.click(".question .buttons button", "Approve")

    text = shown(page, "This call ran once.")

    assert "“Approve” — answered by Alice" in text
    assert page.evaluate("document.querySelector('.tool').dataset.status") == "success"
    resumes = [each for each in requests(page) if "interrupt_responses" in each["payload"]]
    assert len(resumes) == 1


def test_a_question_is_answered_by_typed_text(page):
    say(page, "choice")
    page.type(".question .field input", "medium")
    page.press("Enter")

    text = shown(page, "The human chose 'medium'.")

    assert "“medium” — answered by Alice" in text
    resumes = [each for each in requests(page) if "interrupt_responses" in each["payload"]]
    (resume,) = resumes
    (answer,) = resume["payload"]["interrupt_responses"].values()
    assert answer == {"value": "medium", "source": "input"}


def test_a_restricted_question_pressed_by_the_wrong_person_is_asked_again(page):
    say(page, "restricted")
    as_person(page, "Bob")
    page.click(".question .buttons button", "Approve")
    shown(page, "@Bob's answer was not taken")
    as_person(page, "Alice")
    page.click(".question .buttons button", "Approve")

    text = shown(page, "Deployed to staging (pretend). This call ran once.")

    assert "“Approve” — answered by Bob" in text
    assert "“Approve” — answered by Alice" in text


def test_a_mention_shows_the_persons_name_and_the_wire_keeps_their_id(page):
    say(page, "restricted")
    as_person(page, "Bob")
    page.click(".question .buttons button", "Approve")

    text = shown(page, "@Bob's answer was not taken")

    assert "@UBOB" not in text
    wire = page.evaluate("document.querySelector('#wire-log').textContent")
    assert "<@UBOB>'s answer was not taken" in wire


def test_a_call_waiting_on_its_question_reads_done_as_in_slack_and_the_page_says_why(page):
    say(page, "gate")
    page.wait_for("document.querySelector('.question .buttons')")

    status = page.evaluate("document.querySelector('.tool').dataset.status")
    title = page.evaluate("document.querySelector('.tool').title")
    hint = page.evaluate("document.querySelector('.tool + .waiting-hint')?.textContent")

    assert status == "success"
    assert hint is not None
    assert "the call still waits on the question below" in hint
    assert title == hint


def test_the_note_beside_a_waiting_call_goes_once_its_question_is_answered(page):
    say(page, "gate")
    page.wait_for("document.querySelector('.waiting-hint')")
    page.click(".question .buttons button", "Approve")

    shown(page, "This call ran once.")

    assert page.evaluate("document.querySelectorAll('.waiting-hint, .tool[title]').length") == 0


def test_two_questions_in_one_stop_resume_once_as_whoever_answered_last(page):
    say(page, "two questions")
    page.wait_for("document.querySelectorAll('.question').length === 2")
    as_person(page, "Bob")
    page.click(".question .buttons button", "Approve")
    before = len(requests(page))
    as_person(page, "Alice")
    page.click(".question .buttons button", "Small")

    shown(page, "The human chose 'small'.")

    sent = requests(page)
    assert before == 1  # Bob's answer alone resumed nothing
    resumes = [each for each in sent if "interrupt_responses" in each["payload"]]
    (resume,) = resumes
    assert len(resume["payload"]["interrupt_responses"]) == 2
    assert f"User-Id: {ALICE}" in resume["headers"]


def test_a_reason_welt_would_not_match_shows_the_default_buttons_and_why(page):
    say(page, "unmatched")
    why = page.wait_for("document.querySelector('.question .playground-note')?.textContent")
    labels = page.evaluate(
        "[...document.querySelectorAll('.question .buttons button')].map((b) => b.textContent)"
    )
    fields = page.evaluate("document.querySelectorAll('.question .field').length")
    page.click(".question .buttons button", "Approve")

    shown(page, "The answer was True")

    assert labels == ["Approve", "Reject"]
    assert fields == 0
    assert 'a key Welt does not know: "placeholder"' in why


def test_a_resume_that_cannot_continue_shows_welts_notice_under_the_questions(page):
    say(page, "gate")
    page.wait_for("document.querySelector('.question .buttons')")
    say(page, "file")  # a newer message replaces the open question
    shown(page, "Shared rehearsal-table.csv")
    page.click(".question .buttons button", "Approve")

    notice = page.wait_for("document.querySelector('.stop .resume-failed')?.textContent")
    why = page.evaluate("document.querySelector('.resume-failed + .playground-note').textContent")

    assert notice.startswith("⚠️ Could not resume the agent.")
    assert "the agent's error event said: Nothing to resume" in why


def test_a_failed_reply_shows_welts_failure_notice_and_the_error(page):
    say(page, "fail")

    text = shown(page, "Failed to reply. Please check the app logs.")

    assert "⚠️ Failed to reply. Please check the app logs." in text
    assert "failed on purpose" in text


def test_a_file_downloads_with_its_bytes_and_an_image_shows_inline(page, tmp_path):
    progress = page.downloads_into(tmp_path)
    say(page, "file")
    page.click(".file a", "rehearsal-table.csv")

    done = progress.get(timeout=30)
    while done["params"]["state"] != "completed":
        done = progress.get(timeout=30)
    width = page.wait_for("document.querySelector('.file img')?.naturalWidth")

    (saved,) = tmp_path.iterdir()
    assert saved.read_bytes() == b"item,count\napples,3\npears,5\n"
    assert width == 48


def test_an_attached_file_is_sent_as_welt_encodes_it(page, tmp_path):
    notes = tmp_path / "notes.csv"
    notes.write_bytes(b"a,b\n1,2\n")
    page.attach("#files", notes)
    page.wait_for("document.querySelector('#attached').textContent.includes('notes.csv')")
    say(page, "read this")
    shown(page, "First, a question for you.")

    (sent,) = requests(page)

    (document, text) = sent["payload"]["messages"][0]["content"]
    assert document["document"]["name"] == "notes-csv"
    assert document["document"]["format"] == "csv"
    assert document["document"]["source"]["bytes"].startswith("YSxiCjEsMgo")
    assert text == {"text": "<@UALICE>: read this"}


def test_each_turn_resends_the_thread_with_each_speakers_mention(page):
    say(page, "file")
    shown(page, "Shared rehearsal-table.csv")
    as_person(page, "Bob")
    say(page, "file")
    page.wait_for("document.querySelectorAll('#wire-log > li').length === 2")

    second = requests(page)[1]["payload"]["messages"]

    if keeps_history():  # only what follows Welt's last reply
        assert second == [{"role": "user", "content": [{"text": "<@UBOB>: file"}]}]
    else:  # the whole thread
        assert [message["role"] for message in second] == ["user", "assistant", "user"]
        assert second[0]["content"] == [{"text": "<@UALICE>: file"}]
        assert second[2]["content"] == [{"text": "<@UBOB>: file"}]


def test_a_new_thread_is_a_new_session_in_welts_format(page):
    say(page, "file")
    shown(page, "Shared rehearsal-table.csv")
    page.click("#new-thread")
    say(page, "file")
    shown(page, "Shared rehearsal-table.csv")
    first = page.evaluate("document.querySelector('.thread-view').dataset.session")

    second = page.evaluate("document.querySelector('.thread-view:not([hidden])').dataset.session")

    assert first != second
    assert all(
        re.fullmatch(r"slack_T0PLAYGND_C0PLAYGND_\d{10}-\d{6}_*", each) for each in (first, second)
    )
    assert len(first) >= 33


def test_new_thread_on_a_thread_with_no_message_yet_stays_on_it(page):
    before = current_session(page)

    page.click("#new-thread")

    assert threads_listed(page) == 1
    assert current_session(page) == before


def test_new_thread_goes_back_to_the_thread_still_without_a_message(page):
    say(page, "file")
    shown(page, "Shared rehearsal-table.csv")
    page.click("#new-thread")
    empty = current_session(page)
    page.click("#thread-list li", "file")

    page.click("#new-thread")

    assert threads_listed(page) == 2
    assert current_session(page) == empty


def test_the_screenshot_is_written(page, tmp_path):
    say(page, "gate")
    page.click(".question .buttons button", "Approve")
    shown(page, "This call ran once.")
    say(page, "choice")
    page.wait_for("document.querySelector('.question .field input')")
    path = Path(SCREENSHOT) if SCREENSHOT else tmp_path / "playground.png"

    page.screenshot(path)

    assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert path.stat().st_size > 20_000


def test_a_consent_link_finished_by_alice_alone_lets_the_tool_act_as_her_github(page, tmp_path):
    say(page, "connect")
    link = page.wait_for(
        "(({href, target}) => href && {href, target})(document.querySelector('.question .text a'))"
    )
    shot = Path(CONSENT_SCREENSHOT) if CONSENT_SCREENSHOT else tmp_path / "consent-question.png"
    page.screenshot(shot)
    bobs = page.click_opening_a_tab(".question .text a")
    refused = signed_in_to_slack(bobs, "Bob", "cannot be finished")
    bobs.close()
    alices = page.click_opening_a_tab(".question .text a")
    signed_in_to_slack(alices, "Alice", "Allow as alice")
    alices.click("button", "Allow as alice")
    connected = alices.wait_across_loads(
        "document.body.innerText.includes('Connected') && document.body.innerText"
    )
    alices.close()
    page.click(".question .buttons button", "Done")

    text = shown(page, "You are alice on GitHub")

    assert link["target"] == "_blank"
    assert "/connect?state=" in link["href"]
    assert "Only Slack user UALICE" in refused
    assert "signed in to Slack as Slack user UBOB" in refused
    assert "press Done" in connected
    assert "“Done” — answered by Alice" in text
    assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
