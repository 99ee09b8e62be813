"""Running totals of usage, kept beside the runs, written by many turns at once, sealed.

A person's turns run in many microVMs at the same time, each in its own
thread, so a total read, added to and written back loses whatever another
turn wrote in between. In the bucket, every write is conditional on the
ETag that was read (If-Match, or If-None-Match: * for the first), and a
412 means someone else was first: read again and write again.

A retried write that S3 had applied (its reply lost) would count twice, so
each addition carries a mark, drawn per request, and the total keeps the
latest marks: an addition whose mark is there has been counted. A turn
that may start holds part of the budget until it ends (`Hold`), so turns
that start together cannot each spend what is left; an end it never
reached (a killed process) is forgotten once the hold is older than any
request can run.

Whoever can write the store could lower a total, or write one that is not
one, so each total carries an HMAC over what it holds and its own key,
with the run store's seal key (runs/seal.py): a total that fails its seal
or its shape is damaged, said in one line, and no budget counts on it.
Deleting a total is beyond a seal's reach: it starts the total again.

The folder store is one thread's session storage on AgentCore, and one
process locally: its totals are ledgers of this process, one sealed line
per change.
"""

import asyncio
import hashlib
import hmac
import json
import random
import time
import uuid
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..runs.seal import SealKey
from ..runs.storage import BucketStorage, FolderStorage, RunStorage, StoreUnavailable

if TYPE_CHECKING:
    from botocore.client import BaseClient

T = TypeVar("T")

# Marks kept per total: far more than the turns that can race for one total.
KEEP_MARKS = 200
# Attempts at one conditional write before giving up; each lost one means
# another turn's change landed, so this bounds a storm, not a normal day.
MAX_ATTEMPTS = 100
# Seconds a total's read or write may wait for S3 to begin its reply.
TOTAL_READ_TIMEOUT = 5
# Waits between attempts: up to BACKOFF_BASE after the first loss, doubling to BACKOFF_CAP.
BACKOFF_BASE = 0.01
BACKOFF_CAP = 0.5
# How long a hold outlives the turn that took it if that turn never ends it:
# AgentCore ends a streaming request after 60 minutes.
HOLD_SECONDS = 3600
_SYSTEM_RANDOM = random.SystemRandom()
# Ledgers whose totals the folder store keeps in memory at once.
KEEP_KNOWN = 10_000
SHAPE = 1  # the version of a total's JSON


class CounterContention(StoreUnavailable):
    """Every attempt to write a total lost to another writer."""


class DamagedTotal(StoreUnavailable):
    """A total that is not one the agent wrote: its seal or its shape is wrong."""


class BudgetSpent(Exception):
    """What a hold's decision raises when the total has nothing left to hold."""


@dataclass(frozen=True)
class Hold:
    """What a turn in progress may still spend, until it ends or `until` passes."""

    tokens: int
    cost_micros: int
    until: float


@dataclass(frozen=True)
class Tally:
    """A total: tokens, cost in millionths of a dollar, requests, and the holds of turns running."""

    tokens: int = 0
    cost_micros: int = 0
    requests: int = 0
    marks: tuple[str, ...] = field(default=(), compare=False)
    holds: Mapping[str, Hold] = field(default_factory=dict, compare=False)

    def plus(self, other: "Tally", mark: str) -> "Tally":
        """This total with an addition counted once: its mark, and the hold it ends, settled."""
        return replace(
            self,
            tokens=self.tokens + other.tokens,
            cost_micros=self.cost_micros + other.cost_micros,
            requests=self.requests + other.requests,
            marks=(*self.marks, mark)[-KEEP_MARKS:],
            holds={name: hold for name, hold in self.holds.items() if name != mark},
        )

    def holding(self, mark: str, hold: Hold) -> "Tally":
        return replace(self, holds={**self.holds, mark: hold})

    def live(self, now: float) -> "Tally":
        """Without the holds of turns that can no longer be running."""
        return replace(self, holds={n: h for n, h in self.holds.items() if h.until > now})

    @property
    def held_tokens(self) -> int:
        return sum(hold.tokens for hold in self.holds.values())

    @property
    def held_cost_micros(self) -> int:
        return sum(hold.cost_micros for hold in self.holds.values())

    def fields(self) -> dict[str, Any]:
        return {
            "shape": SHAPE,
            "tokens": self.tokens,
            "costMicros": self.cost_micros,
            "requests": self.requests,
            "marks": list(self.marks),
            "holds": {
                name: {"tokens": h.tokens, "costMicros": h.cost_micros, "until": h.until}
                for name, h in self.holds.items()
            },
        }


def sealed(fields: Mapping[str, Any], key: bytes, where: str) -> bytes:
    """The JSON of a total, or of a ledger line, with its seal over it and where it lives."""
    body = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    seal = hmac.new(key, f"{where}\n{body}".encode(), hashlib.sha256).hexdigest()
    return json.dumps({**fields, "seal": seal}, sort_keys=True, separators=(",", ":")).encode()


def unsealed(data: bytes, key: bytes, where: str) -> dict[str, Any]:
    """What a sealed JSON object holds; DamagedTotal if it is not one the agent sealed here.

    0.14.0 wrote its totals without a seal or a shape. Such a total is taken
    as it stands: whoever can write the store can delete a total, which
    starts it again from nothing, and a total put back without a seal can do
    no more than that; the next write seals it.
    """
    try:
        fields = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise _damaged(where, "it is not JSON") from None
    if isinstance(fields, dict) and "seal" not in fields and "shape" not in fields:
        return {"marks": [], "holds": {}, **fields}  # 0.14.0's
    if not isinstance(fields, dict) or not isinstance(fields.get("seal"), str):
        raise _damaged(where, "it carries no seal")
    seal = fields.pop("seal")
    body = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    expected = hmac.new(key, f"{where}\n{body}".encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(seal, expected):
        raise _damaged(where, "its seal does not match what it holds")
    return fields


def tally_of(fields: Mapping[str, Any], where: str) -> Tally:
    """A total from its fields, each of its shape: anything else is damage, not a total."""
    try:
        holds = {str(name): hold_of(hold, where) for name, hold in fields["holds"].items()}
        marks = fields["marks"]
        if not isinstance(marks, list) or not all(isinstance(mark, str) for mark in marks):
            raise ValueError("marks")
        return Tally(
            _count(fields["tokens"]),
            _count(fields["costMicros"]),
            _count(fields["requests"]),
            tuple(marks[-KEEP_MARKS:]),
            holds,
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        raise _damaged(where, "its fields are not a total's") from None


def hold_of(fields: Mapping[str, Any], where: str) -> Hold:
    try:
        until = fields["until"]
        if isinstance(until, bool) or not isinstance(until, int | float):
            raise ValueError(until)
        return Hold(_count(fields["tokens"]), _count(fields["costMicros"]), float(until))
    except (KeyError, TypeError, ValueError):
        raise _damaged(where, "a hold in it is not a hold") from None


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(value)
    return value


def _damaged(where: str, why: str) -> DamagedTotal:
    return DamagedTotal(
        f"The usage total {where} is damaged ({why}), so no budget can count on it and no "
        "new turn is run against it. Whoever runs the agent can delete it, which starts "
        "the total again from nothing."
    )


def _backoff(attempt: int) -> float:
    """Seconds to wait before trying again after losing a write: random, growing, capped.

    Writers that all retry at once lose to each other again. The jitter comes
    from the OS, not `random`: V2 restores every instance from one snapshot,
    with one `random` state, and instances that draw the same waits retry
    together.
    """
    return _SYSTEM_RANDOM.uniform(0, min(BACKOFF_CAP, BACKOFF_BASE * 2**attempt))


def new_mark() -> str:
    """One per addition or hold, drawn when it is made: never at import (platform/restore.py)."""
    return uuid.uuid4().hex


# Given the total as it stands (holds of finished turns gone), what to hold; BudgetSpent if nothing.
Decide = Callable[[Tally], Hold]


@dataclass(frozen=True)
class Held:
    """A hold taken: the total it is on, its mark, and the write that took it (for the settling)."""

    key: str
    mark: str
    hold: Hold
    written: Any  # what the store needs to settle without reading again: an ETag, or nothing


class Totals:
    """Totals under keys of the run store."""

    shared = False  # whether every instance of the deployment sees the same totals

    async def read(self, key: str) -> Tally:
        raise NotImplementedError

    async def hold(self, key: str, decide: Decide) -> Held:
        """Take a hold on the total, as decide says, written before the turn may start."""
        raise NotImplementedError

    async def add(self, key: str, amount: Tally, mark: str, held: Held | None = None) -> Tally:
        """Add amount once, however often retried with the same mark, ending the hold it settles."""
        raise NotImplementedError


class BucketTotals(Totals):
    """Totals as sealed objects of the bucket, each write conditional on what was read."""

    shared = True

    def __init__(self, storage: BucketStorage, seal: SealKey) -> None:
        self.storage = storage
        self.seal = seal
        self._client: BaseClient | None = None

    def _s3(self) -> "BaseClient":
        """The bucket's client, made on first use: a client holds connections.

        A total is a few hundred bytes, so a reply that has not begun within
        TOTAL_READ_TIMEOUT seconds is a stalled connection, not a slow one:
        botocore gives up on it and tries again (the mark makes a repeated
        write harmless), rather than holding the turn's end for the run
        store's longer timeout.
        """
        from botocore.config import Config

        from ..runs.storage import client_config

        if self._client is None:
            config = client_config().merge(Config(read_timeout=TOTAL_READ_TIMEOUT))
            self._client = self.storage.aws.client("s3", config)
        return self._client

    async def read(self, key: str) -> Tally:
        return (await self._read(key))[0]

    async def _read(self, key: str) -> tuple[Tally, str | None]:
        data, etag = await self._reaching(self._get(key))
        if data is None:
            return Tally(), None
        return tally_of(unsealed(data, await self.seal.key(), key), key), etag

    async def hold(self, key: str, decide: Decide) -> Held:
        mark = new_mark()
        for attempt in range(MAX_ATTEMPTS):
            read, etag = await self._read(key)
            total = read.live(time.time())
            hold = decide(total)  # BudgetSpent goes to the caller
            holding = total.holding(mark, hold)
            written = await self._write(key, holding, etag)
            if written is not None:
                return Held(key, mark, hold, (holding, written))
            await asyncio.sleep(_backoff(attempt))
        raise _contention(key)

    async def add(self, key: str, amount: Tally, mark: str, held: Held | None = None) -> Tally:
        # Ending a hold: the total as the hold wrote it is likely still current,
        # so the first attempt writes on its ETag without reading it again.
        known = held.written if held is not None and held.mark == mark else None
        for attempt in range(MAX_ATTEMPTS):
            if known is not None:
                (total, etag), known = known, None
            else:
                total, etag = await self._read(key)
            if mark in total.marks:
                return total  # a write that landed, whose reply was lost
            added = total.live(time.time()).plus(amount, mark)
            if await self._write(key, added, etag) is not None:
                return added
            await asyncio.sleep(_backoff(attempt))
        raise _contention(key)

    async def _write(self, key: str, total: Tally, etag: str | None) -> str | None:
        """The new ETag, or None when another writer came first."""
        data = sealed(total.fields(), await self.seal.key(), key)
        return await self._reaching(self._put(key, data, etag))

    async def _get(self, key: str) -> tuple[bytes | None, str | None]:
        from botocore.exceptions import ClientError

        try:
            got = await asyncio.to_thread(
                self._s3().get_object, Bucket=self.storage.bucket, Key=self.storage.prefix + key
            )
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None, None
            raise
        body = await asyncio.to_thread(got["Body"].read)
        return body, got["ETag"]

    async def _put(self, key: str, data: bytes, etag: str | None) -> str | None:
        from botocore.exceptions import ClientError

        condition = {"IfMatch": etag} if etag else {"IfNoneMatch": "*"}
        try:
            put = await asyncio.to_thread(
                self._s3().put_object,
                Bucket=self.storage.bucket,
                Key=self.storage.prefix + key,
                Body=data,
                **condition,
            )
        except ClientError as error:
            # 412: another write came first; 409: another conditional write is in flight.
            status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if status in (409, 412):
                return None
            raise
        return str(put["ETag"])

    async def _reaching(self, operation: Awaitable[T]) -> T:
        """The run store's own translation: a failure to reach S3 is StoreUnavailable."""
        return await self.storage._reaching(operation)


class FolderTotals(Totals):
    """Totals as ledgers of the folder store: one sealed line appended per change.

    Not a total rewritten and renamed over the old one, as the run records
    are: renaming over a file makes ext4 write the new file to disk first,
    a wait at every turn, where an appended line is not waited for. A last
    line a crash cut short is skipped, so a change is lost, never half made.
    The folder is this process's alone, so a ledger is read once, at its
    first use after a start, and its total then kept.
    """

    def __init__(self, folder: Path, seal: SealKey) -> None:
        self.folder = folder
        self.seal = seal
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        # Each ledger's total, and whether it ends mid-line, since it was read.
        self._known: dict[str, tuple[Tally, bool]] = {}

    def _ledger(self, key: str) -> Path:
        return self.folder / f"{key.removesuffix('.json')}.jsonl"

    def _lock(self, key: str) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

    async def read(self, key: str) -> Tally:
        return (await self._read(key))[0]

    async def _read(self, key: str) -> tuple[Tally, bool]:
        """The total, and whether the ledger ends mid-line (a crash while appending)."""
        known = self._known.get(key)
        if known is None:
            if len(self._known) >= KEEP_KNOWN:
                self._known.clear()  # threads long gone; a ledger is read again if needed
            known = self._known[key] = self._total_of(key, await self.seal.key())
        return known

    def _total_of(self, key: str, seal: bytes) -> tuple[Tally, bool]:
        try:
            data = self._ledger(key).read_bytes()
        except FileNotFoundError:
            return Tally(), False
        except OSError as failure:
            raise StoreUnavailable(f"The usage total {key} could not be read: {failure}") from None
        lines = data.splitlines()
        cut_short = bool(data) and not data.endswith(b"\n")
        total = Tally()
        for number, line in enumerate(lines, 1):
            if cut_short and number == len(lines):
                continue  # the line a crash cut short
            entry = unsealed(line, seal, key)
            mark = entry.get("mark")
            if not isinstance(mark, str):
                raise _damaged(key, "a line of it has no mark")
            if "hold" in entry:
                total = total.holding(mark, hold_of(entry["hold"], key))
            else:
                total = total.plus(tally_of({**entry, "marks": [], "holds": {}}, key), mark)
        return total, cut_short

    async def hold(self, key: str, decide: Decide) -> Held:
        mark = new_mark()
        async with self._lock(key):
            total, _ = await self._read(key)
            now = total.live(time.time())
            hold = decide(now)
            held = {"tokens": hold.tokens, "costMicros": hold.cost_micros, "until": hold.until}
            await self._append(key, {"mark": mark, "hold": held})
            self._known[key] = (now.holding(mark, hold), False)
        return Held(key, mark, hold, None)

    async def add(self, key: str, amount: Tally, mark: str, held: Held | None = None) -> Tally:
        async with self._lock(key):
            total, _ = await self._read(key)
            if mark in total.marks:
                return total
            entry = {
                "mark": mark,
                "tokens": amount.tokens,
                "costMicros": amount.cost_micros,
                "requests": amount.requests,
            }
            await self._append(key, entry)
            added = total.live(time.time()).plus(amount, mark)
            self._known[key] = (added, False)
            return added

    async def _append(self, key: str, entry: dict[str, Any]) -> None:
        _, cut_short = await self._read(key)
        line = ("\n" if cut_short else "").encode() + sealed(entry, await self.seal.key(), key)
        ledger = self._ledger(key)
        try:
            ledger.parent.mkdir(parents=True, exist_ok=True)
            with ledger.open("ab") as appended:
                appended.write(line + b"\n")
        except OSError as failure:
            self._known.pop(key, None)  # what reached the ledger is read again
            raise StoreUnavailable(
                f"The usage total {key} could not be written: {failure}"
            ) from None


class MemoryTotals(Totals):
    """Totals of this process alone: the warm-up's, and any store that is neither of the above."""

    def __init__(self) -> None:
        self._totals: dict[str, Tally] = {}

    async def read(self, key: str) -> Tally:
        return self._totals.get(key, Tally())

    async def hold(self, key: str, decide: Decide) -> Held:
        mark = new_mark()
        total = (await self.read(key)).live(time.time())
        hold = decide(total)
        self._totals[key] = total.holding(mark, hold)
        return Held(key, mark, hold, None)

    async def add(self, key: str, amount: Tally, mark: str, held: Held | None = None) -> Tally:
        total = self._totals.get(key, Tally())
        if mark not in total.marks:
            self._totals[key] = total = total.live(time.time()).plus(amount, mark)
        return total


def _contention(key: str) -> CounterContention:
    return CounterContention(
        f"The usage total {key} could not be written: {MAX_ATTEMPTS} other writes came first."
    )


def totals_for(storage: RunStorage, seal: SealKey) -> Totals:
    """The totals beside the store's runs: in the same bucket and prefix, or the same folder."""
    if isinstance(storage, BucketStorage):
        return BucketTotals(storage, seal)
    if isinstance(storage, FolderStorage):
        return FolderTotals(storage.folder, seal)
    return MemoryTotals()
