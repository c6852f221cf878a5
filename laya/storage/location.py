"""Where a store lives: a local folder, or an fsspec URL such as `s3://bucket/features/vit.zarr`.

Credentials and the endpoint come from the standard AWS environment variables (`AWS_ACCESS_KEY_ID`,
`AWS_SECRET_ACCESS_KEY`, `AWS_ENDPOINT_URL`, `AWS_PROFILE`, …) that s3fs/botocore read, or from params
`storage: {<protocol>: {fsspec options}}` (e.g. `storage: {s3: {endpoint_url: http://minio:9000}}`), which
`configure_storage` hands to fsspec's per-protocol defaults — never put secrets in params.yaml.

Local paths keep their atomic renames (`laya.core.io`); an object store has no rename, so `move_to` copies server-side
and deletes the source (S3 CopyObject), after which the destination is complete.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fsspec
from fsspec.implementations.local import LocalFileSystem

from laya.core.config import ConfigError
from laya.core.io import atomic_path, replace_path


def is_url(target: str | Path) -> bool:
    return "://" in str(target)


SECRET_OPTIONS = {"key", "secret", "token", "password", "aws_access_key_id", "aws_secret_access_key",
                  "aws_session_token"}


def configure_storage(params: dict[str, Any]) -> None:
    """Apply params `storage` (protocol → fsspec options) as fsspec's defaults for this process."""
    storage = params.get("storage") or {}
    if not isinstance(storage, dict) or not all(isinstance(v, dict) for v in storage.values()):
        raise ConfigError(f"params storage: expected a mapping protocol → fsspec options (e.g. "
                          f"{{s3: {{endpoint_url: http://127.0.0.1:9000}}}}), got {storage!r}.")
    for protocol, options in storage.items():
        secret = sorted(set(options) & SECRET_OPTIONS)
        if secret:
            raise ConfigError(f"params storage.{protocol}.{secret[0]}: credentials never go in params.yaml (it is "
                              f"committed); remove it and set AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or "
                              f"AWS_PROFILE) in the environment.")
        fsspec.config.conf.setdefault(protocol, {}).update(options)


def storage_defaults(target: str | Path) -> dict[str, dict]:
    """{protocol: fsspec options} this process uses for `target` (empty for a local path), for a worker."""
    if not is_url(target):
        return {}
    protocol = str(target).split("://", 1)[0]
    return {protocol: dict(fsspec.config.conf.get(protocol, {}))} if fsspec.config.conf.get(protocol) else {}


class Location:
    """A path on the local disk (`remote` False) or on an fsspec file system (`remote` True)."""

    def __init__(self, fs: fsspec.AbstractFileSystem, path: str):
        self.fs, self.path = fs, path.rstrip("/")

    @classmethod
    def of(cls, target: str | Path) -> Location:
        if isinstance(target, Location):
            return target
        if not is_url(target) or str(target).startswith("file://"):
            return cls(LocalFileSystem(), str(Path(str(target).removeprefix("file://"))))
        try:
            fs, path = fsspec.core.url_to_fs(str(target))
        except (ImportError, ValueError) as err:
            raise ConfigError(f"{target}: cannot open this URL ({err}); install the fsspec back end for its "
                              f"protocol (s3://: `pip install s3fs`).") from None
        return cls(fs, path)

    @property
    def remote(self) -> bool:
        return not isinstance(self.fs, LocalFileSystem)

    @property
    def url(self) -> str:
        """The string a user would type: a local path as is, else protocol://path."""
        if not self.remote:
            return self.path
        protocol = self.fs.protocol if isinstance(self.fs.protocol, str) else self.fs.protocol[0]
        return f"{protocol}://{self.path}"

    def __str__(self) -> str:
        return self.url

    def __truediv__(self, name: str) -> Location:
        return Location(self.fs, f"{self.path}/{name}")

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def parent(self) -> Location:
        return Location(self.fs, self.path.rsplit("/", 1)[0])

    @property
    def local(self) -> Path:
        """The local path (only for a local location)."""
        assert not self.remote, self.url
        return Path(self.path)

    def exists(self) -> bool:
        return self.fs.exists(self.path)

    def zarr_store(self, read_only: bool) -> Any:
        """What `zarr.open_group` takes: the local path, or zarr's FsspecStore over this URL."""
        if not self.remote:
            return self.path
        from zarr.storage import FsspecStore

        return FsspecStore.from_url(self.url, storage_options=fsspec.config.conf.get(self.url.split(":")[0], {}),
                                    read_only=read_only)

    def read_bytes(self) -> bytes:
        return self.fs.cat_file(self.path)

    def write_bytes(self, data: bytes) -> None:
        """Whole or absent: an atomic rename on a local disk, a single PUT on an object store."""
        if self.remote:
            self.fs.pipe_file(self.path, data)
            return
        with atomic_path(self.path) as tmp:
            tmp.write_bytes(data)

    def names(self) -> list[str]:
        """The names directly inside this folder ([] when it does not exist)."""
        try:
            entries = self.fs.ls(self.path, detail=False, refresh=True) if self.remote else self.fs.ls(self.path,
                                                                                                       detail=False)
        except FileNotFoundError:
            return []
        return sorted(e.rstrip("/").rsplit("/", 1)[-1] for e in entries)

    def makedirs(self) -> None:
        if not self.remote:
            Path(self.path).mkdir(parents=True, exist_ok=True)  # object stores have no folders to make

    def remove(self) -> None:
        try:
            self.fs.rm(self.path, recursive=True)
        except FileNotFoundError:
            pass
        if self.remote:
            self.fs.invalidate_cache()

    def move_to(self, final: Location) -> None:
        """Put this (complete) tree at `final`, replacing what was there."""
        if not self.remote:
            replace_path(self.local, final.local)
            return
        final.remove()
        self.fs.copy(self.path, final.path, recursive=True)  # server-side copies; no data through this machine
        self.remove()

    def usage(self) -> tuple[int, int]:
        """(files, bytes) of the tree under this location."""
        sizes = [info["size"] for info in self.fs.find(self.path, detail=True).values() if info["type"] == "file"]
        return len(sizes), int(sum(sizes))

    def check_writable(self, what: str) -> None:
        """One clear line, before any work, when an object store's bucket is missing or refuses our credentials."""
        if not self.remote:
            return
        probe = self.parent / f".{self.name}.laya-write-probe"
        try:
            probe.write_bytes(b"")
            probe.remove()
        except (PermissionError, FileNotFoundError, OSError) as err:
            raise self.refused(what, err) from None

    def refused(self, what: str, err: Exception) -> Exception:
        """The one-line error for an object store that said no: a missing bucket, or credentials it refuses."""
        bucket = self.path.split("/", 1)[0]
        if isinstance(err, FileNotFoundError):
            return ConfigError(f"{self.url}: {what}: bucket '{bucket}' does not exist; create it (`aws s3 mb "
                               f"s3://{bucket}`) or fix the URL.")
        return ConfigError(f"{self.url}: {what}: the object store refused access ({str(err).splitlines()[0]}); "
                           f"check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_ENDPOINT_URL or params storage.")
