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
from collections.abc import Mapping
from dataclasses import dataclass

from ..settings import SLACK_USER, Settings

logger = logging.getLogger(__name__)

USER_ID_HEADER = "X-Amzn-Bedrock-AgentCore-Runtime-User-Id"


@dataclass(frozen=True)
class SlackUser:
    """A Slack user as Welt names it: `slack:<team>:<user>`."""

    id: str

    @property
    def mention(self) -> str:
        """How Slack shows the user in a message: <@U…>."""
        return f"<@{self.id.rsplit(':', 1)[1]}>"


def caller_of(headers: Mapping[str, str], settings: Settings) -> SlackUser | None:
    """The request's verified user, LOCAL_USER_ID off AgentCore when none came, or None.

    A value that is not a Slack user as Welt names one counts as none: a
    restricted question then fails closed instead of trusting it.
    """
    sent = headers.get(USER_ID_HEADER, "").strip()
    if sent:
        if SLACK_USER.fullmatch(sent):
            return SlackUser(sent)
        logger.warning("%s is not a Slack user as Welt names one; no caller taken", USER_ID_HEADER)
        return None
    if settings.local_user_id and not settings.on_agentcore:
        return SlackUser(settings.local_user_id)
    return None
