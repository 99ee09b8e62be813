"""Who sent this request: the Slack user Welt verified, as AgentCore passes it on.

Welt invokes a deployed agent with `runtimeUserId` = `slack:<team>:<user>`;
on a resume it is the person who pressed the button or typed the answer.
AgentCore hands it to the container as the X-Amzn-Bedrock-AgentCore-Runtime-User-Id
header. bedrock-agentcore's `context.request_headers` leaves every
`x-amzn-` header out, so the header is read from the request itself.
The caller is read per request and passed along with it, never kept at
module scope: on AgentCore V2 every instance restored from one snapshot
shares what module scope holds.

The speaker mention `<@U…>: ` that opens each user message is attribution
for the model; anyone can type one, so it never identifies anybody here.
"""

import logging
from typing import TYPE_CHECKING

from ..identity import SlackUser
from ..settings import SLACK_USER, Settings

if TYPE_CHECKING:
    from starlette.datastructures import Headers

logger = logging.getLogger(__name__)

USER_ID_HEADER = "X-Amzn-Bedrock-AgentCore-Runtime-User-Id"

# How much of a refused user id a log line shows: enough to recognise it,
# never a 64 KiB header copied whole.
SHOWN_OF_A_REFUSED_ID = 80


def caller_of(headers: "Headers | None", settings: Settings) -> SlackUser | None:
    """The request's verified user, LOCAL_USER_ID off AgentCore when none came, or None.

    The header is taken exactly as it came: not trimmed (Python's strip()
    would make `slack:T:U\xa0` into that user), bounded in length, and
    sent once. Anything else counts as no user at all, so a restricted
    question fails closed instead of trusting a look-alike.
    """
    sent = headers.getlist(USER_ID_HEADER) if headers is not None else []
    if sent:
        if len(sent) == 1 and SLACK_USER.fullmatch(sent[0]):
            return SlackUser(sent[0])
        shown = ", ".join(_cut_short(value) for value in sent)
        logger.warning(
            "%s is not one Slack user as Welt names one (%s); no caller taken",
            USER_ID_HEADER,
            shown,
        )
        return None
    if settings.local_user_id and not settings.on_agentcore:
        return SlackUser(settings.local_user_id)
    return None


def _cut_short(value: str) -> str:
    """The value as a log line may show it: escaped, and cut at SHOWN_OF_A_REFUSED_ID."""
    if len(value) <= SHOWN_OF_A_REFUSED_ID:
        return repr(value)
    return f"{value[:SHOWN_OF_A_REFUSED_ID]!r}... ({len(value):,} characters)"
