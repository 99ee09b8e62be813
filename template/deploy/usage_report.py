"""`make usage ENV=prod PERIOD=7d`: cost per person, thread and day, from the runtime's logs.

Each request of the agent logs one usage line (app/<package>/accounting/usage.py);
CloudWatch Logs Insights adds them up where they are, so the report reads a
few hundred rows, never the log lines themselves. One query, grouped by
person, thread and day; the three tables are sums of its rows.
"""

import re
import time
from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

import boto3
import botocore.exceptions

from .aws import AwsError

QUERY = (
    "filter ispresent(usage) "
    "| stats sum(totalTokens) as tokens, sum(costUsd) as usd, count(cost) as unpriced, "
    "count(*) as requests "
    "by startedBy, sessionId, datefloor(@timestamp, 1d) as day "
    "| limit 10000"
)
_PERIOD = re.compile(r"([1-9][0-9]*)([hd])")


def period(text: str) -> timedelta:
    """7d or 24h; AwsError says what it takes."""
    matched = _PERIOD.fullmatch(text)
    if matched is None:
        raise AwsError(f"PERIOD must be a number of days or hours such as 7d or 24h, not {text!r}")
    amount, unit = int(matched[1]), matched[2]
    return timedelta(days=amount) if unit == "d" else timedelta(hours=amount)


Row = dict[str, str]


def query_usage(group: str, region: str, since: timedelta) -> list[Row]:
    """The query's rows, each a dict of its fields, once Logs Insights has finished it."""
    client = boto3.client("logs", region_name=region)
    end = datetime.now(UTC)
    try:
        started = client.start_query(
            logGroupName=group,
            startTime=int((end - since).timestamp()),
            endTime=int(end.timestamp()),
            queryString=QUERY,
        )
        while True:
            got = client.get_query_results(queryId=started["queryId"])
            if got["status"] in ("Complete", "Failed", "Cancelled", "Timeout"):
                break
            time.sleep(1)  # Logs Insights has no way to wait for a query but asking again
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as failed:
        raise AwsError(f"log group {group} could not be queried: {failed}") from failed
    if got["status"] != "Complete":
        raise AwsError(f"the usage query on {group} ended {got['status']}")
    return [
        {field["field"]: field["value"] for field in row if "field" in field and "value" in field}
        for row in got["results"]
    ]


def report(rows: Iterable[Row], group: str) -> str:
    """Three tables, largest cost first, and where to see the same in the console."""
    sums: dict[str, dict[str, list[float]]] = {
        "person": defaultdict(lambda: [0.0, 0.0, 0.0]),
        "thread": defaultdict(lambda: [0.0, 0.0, 0.0]),
        "day": defaultdict(lambda: [0.0, 0.0, 0.0]),
    }
    unpriced = 0
    for row in rows:
        unpriced += int(_number(row.get("unpriced")))
        figures = [_number(row.get(name)) for name in ("usd", "tokens", "requests")]
        keys = {
            "person": row.get("startedBy") or "(no verified user)",
            "thread": row.get("sessionId") or "(none)",
            "day": (row.get("day") or "")[:10],
        }
        for table, key in keys.items():
            total = sums[table][key]
            for index, value in enumerate(figures):
                total[index] += value
    lines: list[str] = []
    for table, totals in sums.items():
        lines.append(f"Cost per {table}:")
        ordered = sorted(totals.items(), key=lambda item: (-item[1][0], item[0]))
        if table == "day":
            ordered = sorted(totals.items())
        for key, (cost, tokens, requests) in ordered:
            lines.append(
                f"  {key:<45} {f'${cost:.4f}':>11} {int(tokens):>12,} tokens "
                f"{int(requests):>6,} requests"
            )
        if not totals:
            lines.append("  (no usage lines in this period)")
        lines.append("")
    if unpriced:
        lines.append(
            f"{unpriced:,} requests used a model yours/model_prices.py does not price: "
            "their tokens are counted above, their cost is not."
        )
    lines.append(
        "The same in the "
        f"console: CloudWatch > Logs Insights, log group {group}, this query: {QUERY}"
    )
    return "\n".join(lines)


def _number(value: str | None) -> float:
    try:
        return float(value or 0)
    except ValueError:
        return 0.0
