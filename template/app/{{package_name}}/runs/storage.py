"""Where stored runs live: a folder (AgentCore's session storage, or locally) or an S3 bucket.

Strands' own `Storage` (LocalFileStorage, S3Storage) moves the bytes of a
snapshot. Handing a waiting run to exactly one delivery of its answers needs
one operation more, a write that succeeds only when nothing is there yet,
and each store adds just that on top of Strands' storage: an exclusive
create (O_EXCL) in the folder, a conditional PUT (If-None-Match: *) in the
bucket. No process-local lock is involved, so two processes, or two
microVMs, can race for a run and exactly one of them wins.

Every operation turns a failure to reach the store into StoreUnavailable,
which names the store and the cause, so no caller handles boto3's or the
OS's errors itself. AgentCore resets session storage at every deploy, which
forgets every question still waiting; RUN_STORE=s3 keeps them in a bucket
instead (docs/deploying.md says which store survives what).
"""

import asyncio
import os
from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from strands.storage import InMemoryStorage, LocalFileStorage, S3Storage
from strands.types.exceptions import StorageError

from ..platform.aws_errors import aws_reason, from_aws_client
from ..platform.aws_session import AwsSession
from ..settings import Settings

if TYPE_CHECKING:
    from boto3 import Session
    from botocore.client import BaseClient
    from botocore.config import Config


T = TypeVar("T")


class StoreUnavailable(Exception):
    """The run store could not be read or written; the message names it and says why."""


class RunStorage:
    """Strands' storage for snapshots, plus the one conditional write a claim needs."""

    # Whether every waiting run can be listed cheaply (a folder can; a bucket
    # shared by many microVMs relies on its expiry rule instead).
    lists_everything = False

    def __init__(self, storage: LocalFileStorage | S3Storage | InMemoryStorage) -> None:
        self._storage = storage  # Strands' own

    def describe(self) -> str:
        raise NotImplementedError

    async def read(self, key: str) -> bytes | None:
        return await self._reaching(self._storage.read(key))

    async def write(self, key: str, data: bytes) -> None:
        await self._reaching(self._storage.write(key, data))

    async def delete(self, key: str) -> None:
        await self._reaching(self._storage.delete(key))

    async def list(self, prefix: str) -> list[str]:
        return await self._reaching(self._storage.list(prefix))

    async def create(self, key: str, data: bytes) -> bool:
        """Write data under key only if the key is free; False when someone was first."""
        return await self._reaching(self._create(key, data))

    async def _create(self, key: str, data: bytes) -> bool:
        raise NotImplementedError

    async def _reaching(self, operation: Awaitable[T]) -> T:
        """The operation's result; a failure to reach the store becomes StoreUnavailable."""
        try:
            return await operation
        except Exception as failure:
            if not _is_storage_failure(failure):
                raise
            raise StoreUnavailable(
                f"The run store ({self.describe()}) could not be used: {_cause(failure)}. "
                "Nothing was changed; try again once it is reachable."
            ) from failure


class FolderStorage(RunStorage):
    """A folder: AgentCore's session storage when deployed, a local folder otherwise."""

    lists_everything = True

    def __init__(self, folder: Path) -> None:
        super().__init__(LocalFileStorage(str(folder)))
        self.folder = folder

    def describe(self) -> str:
        return f"folder {self.folder}"

    async def _create(self, key: str, data: bytes) -> bool:
        path = self.folder / key
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return False
        with os.fdopen(descriptor, "wb") as claimed:
            claimed.write(data)
        return True


class BucketStorage(RunStorage):
    """An S3 bucket: outlives deploys and microVMs; boto3 finds the endpoint and credentials.

    boto3's own settings apply, AWS_ENDPOINT_URL_S3 included (the tests point
    it at an S3 server on this machine). The clients are built when the app
    is built, and connect on first use.
    """

    def __init__(self, bucket: str, prefix: str = "", aws: AwsSession | None = None) -> None:
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        # The app's session, for the snapshots, the claims and the usage totals.
        self.aws = aws or AwsSession()
        # S3Storage adds the "/" itself: given "agent/" it would write under "agent//".
        with self.aws.making_clients() as session:
            storage = S3Storage(
                bucket,
                prefix=self.prefix.rstrip("/"),
                boto_session=session,
                boto_client_config=client_config(),
            )
        super().__init__(storage)
        self._client: BaseClient | None = None

    @property
    def session(self) -> "Session":
        return self.aws.session

    def describe(self) -> str:
        where = f"S3 bucket '{self.bucket}'"
        return f"{where}, prefix '{self.prefix}'" if self.prefix else where

    async def _create(self, key: str, data: bytes) -> bool:
        from botocore.exceptions import ClientError

        if self._client is None:
            self._client = self.aws.client("s3", client_config())
        try:
            await asyncio.to_thread(
                self._client.put_object,
                Bucket=self.bucket,
                Key=self.prefix + key,
                Body=data,
                IfNoneMatch="*",
            )
        except ClientError as error:
            # 412: the key exists; 409: another conditional write to it is in flight.
            if error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") in (409, 412):
                return False
            raise
        return True


class MemoryStorage(RunStorage):
    """Runs held in this process only: for the warm-up turn, which must leave nothing behind."""

    def __init__(self) -> None:
        super().__init__(InMemoryStorage())

    def describe(self) -> str:
        return "memory of this process"

    async def _create(self, key: str, data: bytes) -> bool:
        if await self._storage.read(key) is not None:
            return False
        await self._storage.write(key, data)
        return True


def open_run_storage(settings: Settings, aws: AwsSession | None = None) -> RunStorage:
    """The store the settings name: a bucket for RUN_STORE=s3, else the session-storage folder."""
    if settings.run_store == "s3":
        return BucketStorage(settings.state_bucket, settings.state_prefix, aws)
    return FolderStorage(settings.session_storage_dir)


def client_config() -> "Config":
    from botocore.config import Config

    # Connect quickly or say so: a human waits in Slack behind every store call.
    return Config(connect_timeout=5, read_timeout=30, user_agent_extra="welt-agent-runs")


def _is_storage_failure(failure: BaseException) -> bool:
    return isinstance(failure, StorageError | OSError) or from_aws_client(failure)


def _cause(failure: BaseException) -> str:
    """The innermost reason, as S3 or the OS gave it: AccessDenied, NoSuchBucket, refused..."""
    return aws_reason(failure)[1]
