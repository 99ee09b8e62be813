"""One JSON object per log line, in the shape bedrock-agentcore's own lines have; no secret in any.

AgentCore sends stdout/stderr to CloudWatch Logs, where a line is only
searchable by field when it is JSON; mixing formats (ours plain, the app's
JSON since bedrock-agentcore 1.x, plain before) makes every query a regex.
So every logger, the app's included, writes through this one formatter.

At DEBUG (LOG_LEVEL), botocore prints each request and response whole: the
model's API key as AgentCore Identity hands it over, the workload access
token it is fetched with, the seal key's secret string, the role's session
token in every request's headers. A secret can be named for hiding only
once the process has it, and botocore prints it while the call that
fetches it is still running. So the formatter hides secrets by where they
stand, in every record, from the first: the value of any field, header,
parameter or XML element whose name is a secret's (SECRET_NAMES), in the
bodies botocore hands the logger (read as the JSON they are) and in any
text, however quoted or escaped; and, once known, each secret the process
holds (`hide_in_logs`) wherever it stands, under any name or none.

A line also shows at most LONGEST_SHOWN characters of any one value: an
id or an answer a client sent, copied whole, would make one line megabytes
long, and CloudWatch keeps 256 KB of one event.
"""

import copy
import json
import logging
import re
import traceback
from collections.abc import Mapping
from contextvars import ContextVar
from datetime import UTC, datetime
from functools import cache

# The Slack thread (AgentCore session) and request a line belongs to.
session_id: ContextVar[str | None] = ContextVar("session_id", default=None)
request_id: ContextVar[str | None] = ContextVar("request_id", default=None)

SHOWN_INSTEAD = "[hidden]"

# The names whose value is a secret wherever it is logged, compared without
# case, "-" or "_" ("apiKey", "api_key", "X-Api-Key"): Identity's keys and
# tokens, Secrets Manager's values, AWS credentials and signatures, and the
# headers that carry any of them.
SECRET_NAMES = (
    "xamzbedrockagentcoreidentitywat",
    "workloadidentitytoken",
    "workloadaccesstoken",
    "xamzsecuritytoken",
    "secretaccesskey",
    "authorization",
    "refreshtoken",
    "secretbinary",
    "secretstring",
    "sessiontoken",
    "clientsecret",
    "accesstoken",
    "password",
    "signature",
    "idtoken",
    "xapikey",
    "apikey",
)

# How much of one value a line shows: more than any line of the agent's
# own says, and little enough that a line of a few such values stays a few
# kilobytes (CloudWatch keeps 256 KB of one event).
LONGEST_SHOWN = 2_048
# How much of a session id a line shows: AgentCore's are at most 256
# characters; a local client's header can be anything.
SHOWN_OF_A_SESSION = 256

# Secrets this process holds, in each form a line may show them: as they
# are, JSON-escaped, as Python's repr shows a str or bytes. Filled at run
# time, never at import.
_HIDDEN: list[str] = []


def _spelt_any_way(name: str) -> str:
    return "[-_]?".join(re.escape(letter) for letter in name)


# Leaves out what a secret's name may hold between its letters, so that a
# name lowercased and squeezed is one of SECRET_NAMES as it stands.
_SQUEEZED = str.maketrans("", "", "-_")


@cache
def _secret_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The patterns of a named secret's value, in text and in XML; compiled on first need.

    Most lines name no secret (`_may_name_a_secret`), so most processes
    never build these: the first is a long alternation, slow to compile.
    """
    names = "|".join(_spelt_any_way(name) for name in SECRET_NAMES)
    # A secret's name, the end of its quotes, ":" or "=", then its value:
    # quoted (to the same quote, escapes skipped, or to the end of the
    # text) or bare (to the next space or delimiter; "Bearer" and "Basic"
    # are part of it).
    named_value = re.compile(
        r"(?<![A-Za-z0-9])(?:"
        + names
        + r""")
            (?P<between>\\*["']?[ \t]*[:=]\s*(?-i:b)?)
            (?:(?P<quote>\\*["'])(?:\\.|[^\\])*?(?:(?P=quote)|\Z)
              |(?:(?:bearer|basic)[ ]+)?[^\s"'\\,;&<>()\[\]{}]+)""",
        re.IGNORECASE | re.VERBOSE | re.DOTALL,
    )
    # The same in XML, as STS answers: <SessionToken>...</SessionToken>.
    element = re.compile(rf"(<(?:{names})>)[^<]*", re.IGNORECASE)
    return named_value, element


def _may_name_a_secret(text: str) -> bool:
    """False only for a text in which no pattern of `_secret_patterns` can match.

    Squeezing out "-" and "_" and lowercasing can only make more names
    appear, never fewer. Outside ASCII, case-insensitive matching knows
    folds that `lower()` does not (the long s, the Kelvin sign), so such a
    text always goes to the patterns.
    """
    if not text.isascii():
        return True
    squeezed = text.lower().translate(_SQUEEZED)
    return any(name in squeezed for name in SECRET_NAMES)


# What could be a JSON body holding a secret, before it is parsed.
_MAY_HOLD_A_SECRET = re.compile(rb"(?i)key|token|secret|password|authorization|signature")


def hide_in_logs(secret: str) -> None:
    """Every later log line shows SHOWN_INSTEAD wherever it would have shown this secret."""
    if not secret:
        return
    forms = {
        secret,
        json.dumps(secret, ensure_ascii=False)[1:-1],
        repr(secret)[1:-1],
        repr(secret.encode())[2:-1],
        repr(json.dumps(secret).encode())[3:-2],  # a JSON body, as botocore prints it
    }
    _HIDDEN[:] = sorted(set(_HIDDEN) | forms, key=len, reverse=True)


def hidden(text: str) -> str:
    """The text with every secret it shows, known or named, replaced by SHOWN_INSTEAD."""
    for secret in _HIDDEN:
        text = text.replace(secret, SHOWN_INSTEAD)
    if not _may_name_a_secret(text):
        return text
    named_value, element = _secret_patterns()
    text = named_value.sub(_hide_named, text)
    return element.sub(rf"\1{SHOWN_INSTEAD}", text)


def shortened(text: str, most: int = LONGEST_SHOWN) -> str:
    """The text, cut at `most` characters with a note of how long it was."""
    if len(text) <= most:
        return text
    return f"{text[:most]}... ({len(text):,} characters)"


def names_a_secret(name: object) -> bool:
    """Whether a field, header or parameter of this name holds a secret."""
    if isinstance(name, bytes):
        name = name.decode("latin-1")
    if not isinstance(name, str):
        return False
    return name.lower().replace("-", "").replace("_", "") in SECRET_NAMES


def without_secrets(value: object) -> object:
    """A copy of a logged value with every secret-named field hidden, JSON bodies included.

    botocore hands the logger its requests as dicts and its bodies as
    bytes: read as JSON, a body's secret is hidden whatever it holds
    (quotes, escapes, JSON of its own), which no pattern over its repr
    could promise.
    """
    if isinstance(value, Mapping):
        return {
            name: SHOWN_INSTEAD if names_a_secret(name) else without_secrets(item)
            for name, item in value.items()
        }
    if isinstance(value, list | tuple):
        items = [without_secrets(item) for item in value]
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, bytes | str):
        return _json_without_secrets(value)
    return value


def _json_without_secrets(text: bytes | str) -> bytes | str:
    raw = text.encode() if isinstance(text, str) else text
    if raw.lstrip()[:1] not in (b"{", b"[") or not _MAY_HOLD_A_SECRET.search(raw):
        return text
    try:
        parsed = json.loads(raw)
    except ValueError:
        return text
    cleaned = without_secrets(parsed)
    if cleaned == parsed:
        return text
    shown = json.dumps(cleaned, ensure_ascii=False)
    return shown.encode() if isinstance(text, bytes) else shown


def _hide_named(found: re.Match[str]) -> str:
    quote = found["quote"] or ""
    named = found.group()[: found.start("between") - found.start()]
    return f"{named}{found['between']}{quote}{SHOWN_INSTEAD}{quote}"


def _shown(value: object) -> object:
    """A value as a line shows it: secrets hidden, each text at most LONGEST_SHOWN long."""
    if isinstance(value, str):
        return shortened(hidden(value))
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, Mapping):
        return {
            str(name): SHOWN_INSTEAD if names_a_secret(name) else _shown(item)
            for name, item in value.items()
        }
    if isinstance(value, list | tuple | set | frozenset):
        return [_shown(item) for item in value]
    return _shown(str(value))


def _message(record: logging.LogRecord) -> str:
    """The record's message, its arguments' secrets hidden before they are formatted in."""
    if not record.args and isinstance(record.msg, str):
        return record.msg
    shown = copy.copy(record)
    shown.msg = record.msg if isinstance(record.msg, str) else without_secrets(record.msg)
    shown.args = without_secrets(record.args)  # type: ignore[assignment]
    return shown.getMessage()


class JsonLines(logging.Formatter):
    """timestamp, level, message, logger, a record's own fields, requestId/sessionId, the error."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "timestamp": datetime.fromtimestamp(record.created, UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "message": _message(record),
            "logger": record.name,
        }
        fields = getattr(record, "fields", None)  # logger.info(..., extra={"fields": {...}})
        if isinstance(fields, dict):
            line.update(fields)
        if request_id.get():
            line["requestId"] = request_id.get()
        session = session_id.get()
        if session:
            line["sessionId"] = shortened(session, SHOWN_OF_A_SESSION)
        if record.exc_info and record.exc_info[0]:
            kind, error, trace = record.exc_info
            line["errorType"] = kind.__name__
            line["errorMessage"] = str(error)
            line["stackTrace"] = traceback.format_tb(trace)
        return json.dumps(_shown(line), ensure_ascii=False)


def log_json_lines(level: int | str = logging.INFO) -> None:
    """Route every logger, bedrock-agentcore's app logger included, through JsonLines.

    Call it before the app is built: the app gives its logger a handler of
    its own only when that logger has none, and its lines would then show
    twice, once in another format. The level is LOG_LEVEL's.
    """
    handler = logging.StreamHandler()
    handler.setFormatter(JsonLines())
    logging.basicConfig(level=level, handlers=[handler], force=True)
    app_logger = logging.getLogger("bedrock_agentcore.app")
    if not app_logger.handlers:
        app_logger.addHandler(logging.NullHandler())
