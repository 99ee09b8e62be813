"""The playground's screenshots in the generated docs are the ones its browser tests take."""

import shutil

import pytest
from conftest import TEMPLATE, run

pytestmark = pytest.mark.slow  # builds the default project, starts a browser and an agent

SCREENSHOT = TEMPLATE / "template" / "docs" / "images" / "playground.png"
# The consent question of a tool acting as the user, taken by the test that plays it.
CONSENT_SCREENSHOT = TEMPLATE / "template" / "docs" / "images" / "consent-question.png"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def test_the_docs_show_the_screenshot_the_browser_tests_take(built_project):
    if not any(map(shutil.which, BROWSERS)):
        pytest.skip("no Chromium or Chrome here (Debian: apt-get install chromium)")
    built = built_project("defaults")
    screenshots = [
        f"PLAYGROUND_SCREENSHOT={SCREENSHOT}",
        f"CONSENT_SCREENSHOT={CONSENT_SCREENSHOT}",
    ]
    suite = ["uv", "run", "--no-sync", "pytest", "-q", "-p", "no:cacheprovider"]
    browser_tests = ["tests/test_playground_browser.py", "-k", "screenshot or consent_link"]

    taken = run(["env", *screenshots, *suite, *browser_tests], built)

    assert taken.returncode == 0, taken.stdout[-3000:] + taken.stderr[-2000:]
    assert "2 passed" in taken.stdout
    for image in (SCREENSHOT, CONSENT_SCREENSHOT):
        assert image.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    page = (TEMPLATE / "template" / "docs" / "patterns" / "end-to-end.md").read_text()
    assert "](../images/playground.png)" in page
    acting = (TEMPLATE / "template" / "docs" / "patterns" / "acting-as-the-user.md").read_text()
    assert "](../images/consent-question.png)" in acting
