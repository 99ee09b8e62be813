"""A value that a secret's name stands before is hidden in every log line, however it is spelt.

The formatter looks for the names only in lines that may hold one: these
lines are the ones a shortcut could wave through, such as a name spelt with
letters that match only when case is ignored the way `re` ignores it.
"""

import json
import logging

import pytest

SECRET = "s3cr3t-value-0123456789"


def written(log_lines, message: str) -> str:
    logging.getLogger("botocore.endpoint").debug(message)
    (line,) = log_lines()
    return json.loads(line)["message"]


@pytest.mark.parametrize(
    "message",
    [
        f"api_key={SECRET}",
        json.dumps({"apiKey": SECRET}),
        "headers: " + repr({"X-Api-Key": SECRET}),
        f"Authorization: Bearer {SECRET}",
        f"<SessionToken>{SECRET}</SessionToken>",
        f"Workload-Access-Token={SECRET}",
        f"pa\u017f\u017fword={SECRET}",  # the long s, which re's IGNORECASE takes for "s"
        f"api\u212aey={SECRET}",  # the Kelvin sign, which it takes for "k"
    ],
    ids=["snake", "json", "header", "bearer", "xml", "dashes", "long-s", "kelvin"],
)
def test_a_named_secret_is_hidden_however_its_name_is_spelt(log_lines, message):
    shown = written(log_lines, message)

    assert SECRET not in shown
    assert "[hidden]" in shown


def test_a_line_that_names_no_secret_is_written_as_it_is(log_lines):
    message = f"turn used 1200 tokens of a model, thread {SECRET}: Ünïcode kept"

    assert written(log_lines, message) == message
