"""Where stored runs live: a folder (AgentCore's session storage, or locally) or an S3 bucket.

Strands' own `Storage` (LocalFileStorage, S3Storage) moves the bytes of a
snapshot. Handing a waiting run to exactly one delivery of its answers needs
one operation more, a write that succeeds only when nothing is there yet,
and each store adds just that on top of Strands' storage: an exclusive
create (O_EXCL) in the folder, a conditional PUT (If-None-Match: *) in the
bucket. No process-local lock is involved, so two processes, or two
microVMs, can race for a run and exactly one of them wins.

AgentCore resets session storage at every deploy, which forgets every
question still waiting; RUN_STORE=s3 keeps them in a bucket instead (see
docs/deploying.md in the template for which store survives what).
"""

import asyncio
import os
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from strands.storage import InMemoryStorage, LocalFileStorage, S3Storage

from .settings import DEFAULT_RUN_STORE, LOCAL_SESSION_STORAGE

RUN_STORES = ("session-storage", "s3")


class StoreSettingsError(ValueError):
    """The run store's settings cannot work; the message names the variable."""


class StoreUnavailable(Exception):
    """The run store could not be read or written; the message names it and says why."""


class RunStorage:
    """Strands' storage for snapshots, plus the one conditional write a claim needs."""

    storage: LocalFileStorage | S3Storage | InMemoryStorage  # Strands' own
    # Whether every waiting run can be listed cheaply at first use (a folder
    # can; a bucket shared by many microVMs relies on its expiry rule).
    lists_everything = False

    def describe(self) -> str:
        raise NotImplementedError

    async def create(self, key: str, data: bytes) -> bool:
        """Write data under key only if the key is free; False when someone was first."""
        raise NotImplementedError

    @contextmanager
    def reachable(self):
        """Turn any failure to read or write into StoreUnavailable, naming the store."""
        try:
            yield
        except StoreUnavailable:
            raise
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
        self.folder = folder
        self.storage = LocalFileStorage(str(folder))

    def describe(self) -> str:
        return f"folder {self.folder}"

    async def create(self, key: str, data: bytes) -> bool:
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
    it at an S3 server on this machine). The client is built on first use,
    never at import.
    """

    def __init__(self, bucket: str, prefix: str = "") -> None:
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        # S3Storage adds the "/" itself: given "agent/" it would write under "agent//".
        self.storage = S3Storage(
            bucket,
            prefix=self.prefix.rstrip("/"),
            boto_session=_boto_session(),
            boto_client_config=_config(),
        )
        self._client: Any = None

    def describe(self) -> str:
        where = f"S3 bucket '{self.bucket}'"
        return f"{where}, prefix '{self.prefix}'" if self.prefix else where

    async def create(self, key: str, data: bytes) -> bool:
        from botocore.exceptions import ClientError

        if self._client is None:
            self._client = _boto_session().client("s3", config=_config())
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
        self.storage = InMemoryStorage()

    def describe(self) -> str:
        return "memory of this process"

    async def create(self, key: str, data: bytes) -> bool:
        if await self.storage.read(key) is not None:
            return False
        await self.storage.write(key, data)
        return True


def run_storage(env: dict[str, str] | None = None) -> RunStorage:
    """The store RUN_STORE names, where STATE_BUCKET or SESSION_STORAGE_DIR say."""
    env = os.environ if env is None else env
    store = env.get("RUN_STORE") or DEFAULT_RUN_STORE
    if store == "s3":
        bucket = env.get("STATE_BUCKET", "")
        if not bucket:
            raise StoreSettingsError(
                "RUN_STORE=s3 needs STATE_BUCKET, the S3 bucket that keeps runs waiting for "
                "an answer (the deployment sets it, deploy/runtime.py; see .env.example)"
            )
        # One store per place: the endpoint is part of it (an S3-compatible server).
        return _bucket(bucket, env.get("STATE_PREFIX", ""), env.get("AWS_ENDPOINT_URL_S3", ""))
    if store == "session-storage":
        return _folder(storage_dir(env))
    raise StoreSettingsError(f"RUN_STORE must be one of {', '.join(RUN_STORES)}, not {store!r}")


def storage_dir(env: dict[str, str] | None = None) -> Path:
    """SESSION_STORAGE_DIR (on AgentCore, its session storage), else the local folder."""
    env = os.environ if env is None else env
    return Path(env.get("SESSION_STORAGE_DIR") or LOCAL_SESSION_STORAGE).expanduser()


@cache
def _folder(folder: Path) -> FolderStorage:
    return FolderStorage(folder)


@cache
def _bucket(bucket: str, prefix: str, endpoint: str) -> BucketStorage:
    return BucketStorage(bucket, prefix)


@cache
def _boto_session() -> Any:
    """One boto3 session for the snapshots and the claims: credentials are resolved once."""
    import boto3

    return boto3.Session()


def _config() -> Any:
    from botocore.config import Config

    # Connect quickly or say so: a human waits in Slack behind every store call.
    return Config(connect_timeout=5, read_timeout=30, user_agent_extra="welt-agent-runs")


def _is_storage_failure(failure: BaseException) -> bool:
    from strands.types.exceptions import StorageError

    if isinstance(failure, StorageError | OSError):
        return True
    module = type(failure).__module__
    return module.startswith(("botocore", "boto3", "urllib3"))


def _cause(failure: BaseException) -> str:
    """The innermost reason, as S3 or the OS gave it: AccessDenied, NoSuchBucket, refused..."""
    while failure.__cause__ is not None:
        failure = failure.__cause__
    response = getattr(failure, "response", None)
    if isinstance(response, dict) and response.get("Error"):
        error = response["Error"]
        return f"{error.get('Code', 'error')}: {error.get('Message', '')}".rstrip(": ")
    return f"{type(failure).__name__}: {failure}"
