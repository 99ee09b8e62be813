"""One JSON object per log line, in the shape bedrock-agentcore's own lines have.

AgentCore sends stdout/stderr to CloudWatch Logs, where a line is only
searchable by field when it is JSON; mixing formats (ours plain, the app's
JSON since bedrock-agentcore 1.x, plain before) makes every query a regex.
So every logger, the app's included, writes through this one formatter.
"""

import json
import logging
import traceback
from contextvars import ContextVar
from datetime import UTC, datetime

# The Slack thread (AgentCore session) and request a line belongs to.
session_id: ContextVar[str | None] = ContextVar("session_id", default=None)
request_id: ContextVar[str | None] = ContextVar("request_id", default=None)

# Secrets this process holds that no line may show, whoever logs them:
# botocore's DEBUG lines print whole response bodies, the model's API key
# among them (model/api_key.py). Filled at run time, never at import.
_HIDDEN: set[str] = set()
SHOWN_INSTEAD = "[hidden]"


def hide_in_logs(secret: str) -> None:
    """Every later log line shows SHOWN_INSTEAD where it would have shown this secret."""
    if secret:
        _HIDDEN.add(json.dumps(secret, ensure_ascii=False)[1:-1])  # as it stands in a line


class JsonLines(logging.Formatter):
    """timestamp, level, message, logger, a record's own fields, requestId/sessionId, the error."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "timestamp": datetime.fromtimestamp(record.created, UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "message": record.getMessage(),
            "logger": record.name,
        }
        fields = getattr(record, "fields", None)  # logger.info(..., extra={"fields": {...}})
        if isinstance(fields, dict):
            line.update(fields)
        if request_id.get():
            line["requestId"] = request_id.get()
        if session_id.get():
            line["sessionId"] = session_id.get()
        if record.exc_info and record.exc_info[0]:
            kind, error, trace = record.exc_info
            line["errorType"] = kind.__name__
            line["errorMessage"] = str(error)
            line["stackTrace"] = traceback.format_tb(trace)
        text = json.dumps(line, ensure_ascii=False, default=str)
        for secret in _HIDDEN:
            text = text.replace(secret, SHOWN_INSTEAD)
        return text


def log_json_lines(level: int = logging.INFO) -> None:
    """Route every logger, bedrock-agentcore's app logger included, through JsonLines.

    Call it before the app is built: the app gives its logger a handler of
    its own only when that logger has none, and its lines would then show
    twice, once in another format.
    """
    handler = logging.StreamHandler()
    handler.setFormatter(JsonLines())
    logging.basicConfig(level=level, handlers=[handler], force=True)
    app_logger = logging.getLogger("bedrock_agentcore.app")
    if not app_logger.handlers:
        app_logger.addHandler(logging.NullHandler())
