"""A thread's record in the run store, read and written in one place.

Keys, under the store's root, flat, one record per thread:
    threads/<session>.json        the run's snapshot and questions while it waits;
                                  how it ended afterwards (for a late answer); with
                                  history, the conversation's snapshot
    claims/<session>.<run>.json   one per resume, made by one request only

The record is Strands' own snapshot of the agent (`Agent.take_snapshot`:
messages, agent.state with a tool's memo and the gate's fingerprints, and
the interrupt state) with what the store adds around it. A record of
another format is refused, not guessed at: a release that changes it says
so in its changelog.
"""

import json
import time
from dataclasses import dataclass
from typing import Any

from strands import Agent
from strands.types import Snapshot
from strands.types.session import decode_bytes_values, encode_bytes_values

FORMAT = 2

# Strands' snapshot of an agent, as JSON (file bytes as base64).
StoredSnapshot = dict[str, Any]


class DamagedRecord(ValueError):
    """Bytes under a thread's key that are not a record of this format; the message says how."""


@dataclass(frozen=True)
class Waiting:
    """A run stopped on questions: the one state an answer can resume."""

    run: str  # one id per stop on questions, claimed once
    questions: dict[str, Any]  # interrupt id -> the reason the human saw
    asked_at: float
    snapshot: StoredSnapshot | None  # the agent as it stopped


@dataclass(frozen=True)
class Settled:
    """No run waits: how the last one ended (for a late answer), and with history the thread."""

    outcome: str  # "" for a conversation saved after a turn that asked nothing
    at: float
    snapshot: StoredSnapshot | None


Record = Waiting | Settled


def parse(stored: bytes) -> Record:
    """The record these bytes hold; DamagedRecord when they hold none of this format."""
    try:
        data = json.loads(stored)
    except ValueError as damage:
        raise DamagedRecord(f"not JSON: {damage}") from None
    stored_format = data.get("format") if isinstance(data, dict) else None
    if stored_format != FORMAT:
        raise DamagedRecord(
            f"written by another version of this agent (format {stored_format!r}; "
            f"this one reads {FORMAT})"
        )
    snapshot = data.get("snapshot")
    if snapshot is not None and not isinstance(snapshot, dict):
        raise DamagedRecord("its snapshot is not an object")
    try:
        if "questions" in data:
            return Waiting(
                str(data["run"]), dict(data["questions"]), float(data["asked_at"]), snapshot
            )
        return Settled(str(data.get("outcome", "")), float(data.get("at", 0.0)), snapshot)
    except (ValueError, KeyError, TypeError) as damage:
        raise DamagedRecord(f"{damage!r} is missing or wrong") from None


def dump(record: Record) -> bytes:
    if isinstance(record, Waiting):
        data: dict[str, Any] = {
            "run": record.run,
            "asked_at": record.asked_at,
            "questions": record.questions,
        }
    else:
        data = {"at": record.at, **({"outcome": record.outcome} if record.outcome else {})}
    if record.snapshot is not None:
        data["snapshot"] = record.snapshot
    return json.dumps({"format": FORMAT, **data}).encode()


def claim_record() -> bytes:
    return json.dumps({"at": time.time()}).encode()


def claimed_at(stored: bytes) -> float | None:
    """When a claim was made; None for bytes that are not a claim."""
    try:
        at = json.loads(stored).get("at")
    except (ValueError, AttributeError):
        return None
    return float(at) if isinstance(at, int | float) else None


def thread_key(session_id: str) -> str:
    return f"threads/{session_id}.json"


def session_of(key: str) -> str:
    return key.removeprefix("threads/").removesuffix(".json")


def claim_key(session_id: str, run: str) -> str:
    return f"claims/{session_id}.{run}.json"


def snapshot_of(agent: Agent) -> StoredSnapshot:
    """Strands' own snapshot of the agent, as JSON (file bytes as base64)."""
    return encode_bytes_values(agent.take_snapshot(preset="session").to_dict())


def load(agent: Agent, snapshot: StoredSnapshot | None) -> None:
    """Restore a stored snapshot into a new agent; raises when it is not one."""
    if not isinstance(snapshot, dict):
        raise ValueError("the snapshot is missing")
    agent.load_snapshot(Snapshot.from_dict(decode_bytes_values(snapshot)))
