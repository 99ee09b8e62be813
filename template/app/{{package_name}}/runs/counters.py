"""Running totals of usage, kept in the run store, added to by many turns at once.

A person's turns run in many microVMs at the same time, each in its own
thread, so a total read, added to and written back loses whatever another
turn wrote in between. In the bucket, every write is conditional on the
ETag that was read (If-Match, or If-None-Match: * for the first), and a
412 means someone else was first: read again and add again.

That alone could count twice: a PUT that S3 applied but whose reply was
lost is retried (by botocore, or by us), and a retry of a write that
landed would add the turn a second time. So each addition carries a mark,
drawn per request, and the total keeps the latest marks; an addition whose
mark is already there has been counted, and is not added again.

The folder store is one thread's session storage on AgentCore, and one
process locally, so its totals are guarded by a lock of this process.
"""

import asyncio
import json
import random
import uuid
import weakref
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from .storage import BucketStorage, FolderStorage, RunStorage, StoreUnavailable

if TYPE_CHECKING:
    from botocore.client import BaseClient

T = TypeVar("T")

# Marks kept per total: far more than the turns that can race for one total.
KEEP_MARKS = 200
# Attempts at one conditional write before giving up; each lost one means
# another turn's addition landed, so this bounds a storm, not a normal day.
MAX_ATTEMPTS = 100
# Seconds a total's read or write may wait for S3 to begin its reply.
TOTAL_READ_TIMEOUT = 5
# Waits between attempts: up to BACKOFF_BASE after the first loss, doubling to BACKOFF_CAP.
BACKOFF_BASE = 0.01
BACKOFF_CAP = 0.5
_SYSTEM_RANDOM = random.SystemRandom()
# Ledgers whose totals the folder store keeps in memory at once.
KEEP_KNOWN = 10_000


class CounterContention(StoreUnavailable):
    """Every attempt to add to a total lost to another writer."""


@dataclass(frozen=True)
class Tally:
    """A total: tokens, cost in millionths of a dollar (priced turns only), requests."""

    tokens: int = 0
    cost_micros: int = 0
    requests: int = 0
    marks: tuple[str, ...] = field(default=(), compare=False)

    def plus(self, other: "Tally", mark: str) -> "Tally":
        return Tally(
            self.tokens + other.tokens,
            self.cost_micros + other.cost_micros,
            self.requests + other.requests,
            (*self.marks, mark)[-KEEP_MARKS:],
        )

    def to_bytes(self) -> bytes:
        return json.dumps(
            {
                "tokens": self.tokens,
                "costMicros": self.cost_micros,
                "requests": self.requests,
                "marks": list(self.marks),
            }
        ).encode()

    @classmethod
    def from_bytes(cls, data: bytes | None) -> "Tally":
        if not data:
            return cls()
        fields = json.loads(data)
        return cls(
            int(fields["tokens"]),
            int(fields["costMicros"]),
            int(fields["requests"]),
            tuple(fields.get("marks", ())),
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
    """One per addition, drawn when it is made: never at import (platform/restore.py)."""
    return uuid.uuid4().hex


class Counters:
    """Totals under keys of the run store."""

    shared = False  # whether every instance of the deployment sees the same totals

    async def read(self, key: str) -> Tally:
        raise NotImplementedError

    async def add(self, key: str, amount: Tally, mark: str) -> Tally:
        """Add amount to the total once, however often it is retried with the same mark."""
        raise NotImplementedError


class FolderCounters(Counters):
    """Totals as ledgers of the folder store: one line appended per addition.

    Not a total rewritten and renamed over the old one, as the run records
    are: renaming over a file makes ext4 write the new file to disk first,
    a wait at every turn, where an appended line is not waited for. A line
    a crash cut short is skipped, so an addition is lost, never half made.
    The folder is this process's alone, so a ledger is read once, at its
    first use after a start, and its total then kept.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        # Each ledger's total, and whether it ends mid-line, since it was read.
        self._known: dict[str, tuple[Tally, bool]] = {}

    def _ledger(self, key: str) -> Path:
        return self.folder / f"{key.removesuffix('.json')}.jsonl"

    async def read(self, key: str) -> Tally:
        return self._read(key)[0]

    def _read(self, key: str) -> tuple[Tally, bool]:
        """The total, and whether the ledger ends mid-line (a crash while appending)."""
        known = self._known.get(key)
        if known is None:
            if len(self._known) >= KEEP_KNOWN:
                self._known.clear()  # threads long gone; a ledger is read again if needed
            known = self._known[key] = self._read_ledger(key)
        return known

    def _read_ledger(self, key: str) -> tuple[Tally, bool]:
        try:
            data = self._ledger(key).read_bytes()
        except FileNotFoundError:
            return Tally(), False
        except OSError as failure:
            raise StoreUnavailable(f"The usage total {key} could not be read: {failure}") from None
        total = Tally()
        for line in data.splitlines():
            try:
                entry = json.loads(line)
                amount = Tally(
                    int(entry["tokens"]), int(entry["costMicros"]), int(entry["requests"])
                )
                total = total.plus(amount, str(entry["mark"]))
            except (ValueError, KeyError, TypeError):
                continue  # the line a crash cut short
        return total, bool(data) and not data.endswith(b"\n")

    async def add(self, key: str, amount: Tally, mark: str) -> Tally:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        async with lock:
            total, cut_short = self._read(key)
            if mark in total.marks:
                return total
            entry = {
                "tokens": amount.tokens,
                "costMicros": amount.cost_micros,
                "requests": amount.requests,
                "mark": mark,
            }
            line = ("\n" if cut_short else "") + json.dumps(entry) + "\n"
            ledger = self._ledger(key)
            try:
                ledger.parent.mkdir(parents=True, exist_ok=True)
                with ledger.open("a", encoding="utf-8") as appended:
                    appended.write(line)
            except OSError as failure:
                self._known.pop(key, None)  # what reached the ledger is read again
                raise StoreUnavailable(
                    f"The usage total {key} could not be written: {failure}"
                ) from None
            added = total.plus(amount, mark)
            self._known[key] = (added, False)
            return added


class BucketCounters(Counters):
    """Totals as objects of the bucket, each write conditional on what was read."""

    shared = True

    def __init__(self, storage: BucketStorage) -> None:
        self.storage = storage
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

        from .storage import client_config

        if self._client is None:
            config = client_config().merge(Config(read_timeout=TOTAL_READ_TIMEOUT))
            self._client = self.storage.session.client("s3", config=config)
        return self._client

    async def read(self, key: str) -> Tally:
        data, _ = await self._reaching(self._get(key))
        return Tally.from_bytes(data)

    async def add(self, key: str, amount: Tally, mark: str) -> Tally:
        for attempt in range(MAX_ATTEMPTS):
            data, etag = await self._reaching(self._get(key))
            total = Tally.from_bytes(data)
            if mark in total.marks:
                return total  # a write that landed, whose reply was lost
            added = total.plus(amount, mark)
            if await self._reaching(self._put(key, added.to_bytes(), etag)):
                return added
            await asyncio.sleep(_backoff(attempt))
        raise CounterContention(
            f"The usage total {key} could not be written: {MAX_ATTEMPTS} other writes came first."
        )

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

    async def _put(self, key: str, data: bytes, etag: str | None) -> bool:
        from botocore.exceptions import ClientError

        condition = {"IfMatch": etag} if etag else {"IfNoneMatch": "*"}
        try:
            await asyncio.to_thread(
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
                return False
            raise
        return True

    async def _reaching(self, operation: Awaitable[T]) -> T:
        """The run store's own translation: a failure to reach S3 is StoreUnavailable."""
        return await self.storage._reaching(operation)


class MemoryCounters(Counters):
    """Totals of this process alone: the warm-up's, and any store that is neither of the above."""

    def __init__(self) -> None:
        self._totals: dict[str, Tally] = {}

    async def read(self, key: str) -> Tally:
        return self._totals.get(key, Tally())

    async def add(self, key: str, amount: Tally, mark: str) -> Tally:
        total = self._totals.get(key, Tally())
        if mark not in total.marks:
            self._totals[key] = total = total.plus(amount, mark)
        return total


def counters_for(storage: RunStorage) -> Counters:
    """The totals beside the store's runs: in the same bucket and prefix, or the same folder."""
    if isinstance(storage, BucketStorage):
        return BucketCounters(storage)
    if isinstance(storage, FolderStorage):
        return FolderCounters(storage.folder)
    return MemoryCounters()
