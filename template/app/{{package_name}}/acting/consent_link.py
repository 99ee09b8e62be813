"""The sealed state a consent link carries, from the agent that asked to the endpoint that binds.

A link shown in a Slack channel can be opened by anyone, and a link can be
forwarded: so the state in it says who the consent is for (the run's
starter, as Slack verified them), which Identity session it completes and
until when, and carries an HMAC-SHA256 with a key of its own. The
session-binding endpoint (binding/) trusts nothing in a link it cannot
open with that key: a forged, expired or reused-for-another-purpose state
is refused. It is not the run seal's key (runs/seal.py): the endpoint is
public, and must not be able to seal a run the agent would trust.

Sealed, not encrypted: whoever sees the link may read what it names (the
user id and the provider's authorization URL, which the link would show
anyway); only the key holder can make one. The standard library alone, and
nothing of the package: the endpoint's Lambda bundle imports this module
without Strands.
"""

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from typing import Any

CONSENT_LIFETIME_SECONDS = 600
CONSENT_PURPOSE = "consent"

# The session-binding endpoint's paths, below its base URL (CONSENT_ENDPOINT_URL).
CONNECT_PATH = "/connect"
SIGNED_IN_PATH = "/signed-in"
CALLBACK_PATH = "/callback"

# The longest sealed text opened: a link, a cookie; anything longer is not ours.
LONGEST_SEALED = 16_384


class StateRefused(Exception):
    """A sealed state that cannot be trusted; `reason` is one of the four below, the message a line.

    forged (the seal does not match), expired, another purpose (a state
    sealed for something else), malformed.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"the state is {reason}"
            if reason != "another purpose"
            else "the state was sealed for another purpose"
        )
        self.reason = reason


def _mac(key: bytes, text: str) -> str:
    return hmac.new(key, text.encode("ascii"), hashlib.sha256).hexdigest()


def seal(purpose: str, data: dict[str, Any], key: bytes, expires_at: float) -> str:
    """base64url of the JSON of {purpose, exp, **data}, a dot, and the hex HMAC of that text."""
    payload = json.dumps(
        {**data, "purpose": purpose, "exp": expires_at}, separators=(",", ":"), sort_keys=True
    )
    text = base64.urlsafe_b64encode(payload.encode()).decode("ascii").rstrip("=")
    return f"{text}.{_mac(key, text)}"


def unseal(purpose: str, token: str, key: bytes, now: float) -> dict[str, Any]:
    """The data sealed for this purpose, still valid at now; StateRefused says why not."""
    if not isinstance(token, str) or len(token) > LONGEST_SEALED or "." not in token:
        raise StateRefused("malformed")
    text, _, mac = token.rpartition(".")
    try:
        text.encode("ascii")
    except UnicodeEncodeError:
        raise StateRefused("malformed") from None
    if not hmac.compare_digest(_mac(key, text), mac):
        raise StateRefused("forged")
    try:
        data = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (binascii.Error, ValueError):
        raise StateRefused("malformed") from None
    if not isinstance(data, dict) or not isinstance(data.get("exp"), int | float):
        raise StateRefused("malformed")
    if data.get("purpose") != purpose:
        raise StateRefused("another purpose")
    if now >= data["exp"]:
        raise StateRefused("expired")
    return data


@dataclass(frozen=True)
class ConsentState:
    """Whose consent a link asks for, for which provider and Identity session, until when.

    user is `slack:<team>:<user>`, the run's starter as Welt verified them;
    nonce is drawn once per question and claimed once by the endpoint, so a
    callback cannot be replayed.
    """

    user: str
    provider: str
    service: str  # the provider as people name it: "GitHub"
    session_uri: str
    authorization_url: str
    nonce: str
    expires: float

    @classmethod
    def new(
        cls,
        user: str,
        provider: str,
        service: str,
        session_uri: str,
        authorization_url: str,
        now: float,
    ) -> "ConsentState":
        """A state with a new nonce, valid for CONSENT_LIFETIME_SECONDS from now."""
        return cls(
            user,
            provider,
            service,
            session_uri,
            authorization_url,
            secrets.token_urlsafe(16),
            now + CONSENT_LIFETIME_SECONDS,
        )

    def sealed(self, key: bytes) -> str:
        data = {
            "user": self.user,
            "provider": self.provider,
            "service": self.service,
            "session_uri": self.session_uri,
            "authorization_url": self.authorization_url,
            "nonce": self.nonce,
        }
        return seal(CONSENT_PURPOSE, data, key, self.expires)

    @classmethod
    def opened(cls, token: str, key: bytes, now: float) -> "ConsentState":
        """The state a link carries; StateRefused if it is not one the key sealed, or expired."""
        data = unseal(CONSENT_PURPOSE, token, key, now)
        fields = ("user", "provider", "service", "session_uri", "authorization_url", "nonce")
        if not all(isinstance(data.get(name), str) and data[name] for name in fields):
            raise StateRefused("malformed")
        return cls(
            data["user"],
            data["provider"],
            data["service"],
            data["session_uri"],
            data["authorization_url"],
            data["nonce"],
            float(data["exp"]),
        )
