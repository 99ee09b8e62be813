"""A thread's record in the run store, read and written in one place.

Keys, under the store's root, flat, one record per thread:
    threads/<session>.json        the run's snapshot and questions while it waits;
                                  how it ended afterwards (for a late answer); with
                                  history, the conversation's snapshot
    claims/<session>.<run>.json   one per resume, made by one request only

The record is Strands' own snapshot of the agent (`Agent.take_snapshot`:
messages, agent.state with a tool's memo and the gate's fingerprints, and
the interrupt state) with what the store adds around it: the thread it
belongs to, the run's id, when it was asked, and a seal, an HMAC-SHA256
over all of that with a key the store never holds (seal.py). A record that
fails any check is refused as damaged, never guessed at: one of another
format (a release that changes it says so in its changelog), a seal that
does not match (changed by anyone but the agent), another thread's record
copied under this thread's key, or one dated in the future, which would
never expire.
"""

import hashlib
import hmac
import json
import re
import time
from dataclasses import dataclass
from typing import Any

from strands import Agent
from strands.types import Snapshot
from strands.types.session import decode_bytes_values, encode_bytes_values

FORMAT = 3

# How far ahead of this machine's clock a record may be dated: another
# microVM's clock, not a forger's "never expires".
CLOCK_SKEW_SECONDS = 300

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


def parse(stored: bytes, session_id: str, key: bytes) -> Record:
    """The record these bytes hold for this thread; DamagedRecord says why they hold none."""
    body, seal = _unsealed(stored)
    if seal is None or not hmac.compare_digest(seal, _seal(body, key)):
        raise _damage_of(stored)
    data = json.loads(body)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise _damage_of(body)  # sealed by this key, by another version of the agent
    if data.get("session") != session_id:
        raise DamagedRecord("it was stored for another thread and copied under this one's key")
    snapshot = data.get("snapshot")
    if snapshot is not None and not isinstance(snapshot, dict):
        raise DamagedRecord("its snapshot is not an object")
    try:
        if "questions" in data:
            dated = float(data["asked_at"])
            parsed: Record = Waiting(str(data["run"]), dict(data["questions"]), dated, snapshot)
        else:
            dated = float(data.get("at", 0.0))
            parsed = Settled(str(data.get("outcome", "")), dated, snapshot)
    except (ValueError, KeyError, TypeError) as damage:
        raise DamagedRecord(f"{damage!r} is missing or wrong") from None
    if dated > time.time() + CLOCK_SKEW_SECONDS:
        raise DamagedRecord("it is dated in the future")
    return parsed


def dump(record: Record, session_id: str, key: bytes) -> bytes:
    """The record's bytes for this thread, sealed with the key."""
    data: dict[str, Any] = {"format": FORMAT, "session": session_id}
    if isinstance(record, Waiting):
        data.update(run=record.run, asked_at=record.asked_at, questions=record.questions)
    else:
        data["at"] = record.at
        if record.outcome:
            data["outcome"] = record.outcome
    if record.snapshot is not None:
        data["snapshot"] = record.snapshot
    return sealed(data, key)


def sealed(data: dict[str, Any], key: bytes) -> bytes:
    """A record's fields as stored: their JSON, and the seal over those very bytes last.

    The seal covers the bytes as written, so reading one back checks them
    before parsing them, and neither side serializes anything twice.
    """
    body = json.dumps(data, separators=(",", ":")).encode()
    return body[:-1] + b',"seal":"' + _seal(body, key).encode() + b'"}'


# How a sealed record ends: its body's last brace gives way to the seal.
_SEAL = re.compile(rb',"seal":"([0-9a-f]{64})"\}')
_SEAL_LENGTH = len(b',"seal":""}') + 64


def _unsealed(stored: bytes) -> tuple[bytes, str | None]:
    """The body the seal covers, and the seal; None when the bytes do not end in one."""
    ending = _SEAL.fullmatch(stored[-_SEAL_LENGTH:])
    if ending is None:
        return stored, None
    return stored[:-_SEAL_LENGTH] + b"}", ending.group(1).decode()


def _seal(body: bytes, key: bytes) -> str:
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def _damage_of(stored: bytes) -> DamagedRecord:
    """Why bytes whose seal does not check are no record: not JSON, another format, or changed."""
    try:
        data = json.loads(stored)
    except ValueError as damage:
        return DamagedRecord(f"not JSON: {damage}")
    stored_format = data.get("format") if isinstance(data, dict) else None
    if stored_format != FORMAT:
        return DamagedRecord(
            f"written by another version of this agent (format {stored_format!r}; "
            f"this one reads {FORMAT})"
        )
    return DamagedRecord(
        "its seal does not match what it holds: it was changed by something other than "
        "this agent, or sealed with another key"
    )


def claim_record(session_id: str, run: str) -> bytes:
    """What a claim holds: when it was made, and the thread and run it claims, for inspection."""
    return json.dumps({"at": time.time(), "session": session_id, "run": run}).encode()


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
