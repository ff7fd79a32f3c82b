"""The data registry: every real file the book reads, with its sha256 and where it came from.

Lookup order for a registered file ``name`` (e.g. ``"clustering/d31.data.gz"``):

1. each directory listed in ``LVMREPRO_DATA`` (``os.pathsep``-separated), as ``DIR/name``;
2. the download cache (``LVMREPRO_CACHE`` or the user cache), as filled by step 3;
3. a download with pooch from the recorded source (``https://raw.githubusercontent.com/REPO/COMMIT/PATH``,
   or ``LVMREPRO_DATA_URL/name`` when a mirror is set), unless ``LVMREPRO_OFFLINE=1``.  Files made
   here from a package (the ONNX networks under ``cnn/``) have no repository: without a mirror they
   come only from the shared data folder, and their ``note`` records the package, version and
   conversion.

The checksum is verified every time a file is handed out (memoised per process by size and
mtime).  A missing file or a mismatch raises an error naming the file, where it was looked for
and how to get it.  There is no fallback to other data.
"""
from __future__ import annotations

import csv
import hashlib
import os
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from urllib.parse import quote

from lvmrepro.provenance import record as record_provenance

REGISTRY_FILE = "registry.tsv"
RAW_URL = "https://raw.githubusercontent.com/{repository}/{commit}/{path}"


class DataFileMissing(FileNotFoundError):
    """A registered data file is neither on the search path nor downloadable."""


class ChecksumMismatch(ValueError):
    """A data file was found but its sha256 is not the registered one."""


@dataclass(frozen=True)
class Entry:
    name: str
    sha256: str
    size: int
    repository: str
    commit: str
    repo_path: str
    citation: str
    licence: str
    note: str = ""

    @property
    def has_source(self) -> bool:
        """Whether the file can be downloaded from a repository snapshot (converted files cannot)."""
        return bool(self.repository and self.commit)

    @property
    def url(self) -> str | None:
        """Download address: the mirror if set, else the repository snapshot, else ``None``."""
        mirror = os.environ.get("LVMREPRO_DATA_URL")
        if mirror:
            return mirror.rstrip("/") + "/" + quote(self.name)
        if not self.has_source:
            return None
        return RAW_URL.format(repository=self.repository, commit=self.commit, path=quote(self.repo_path))

    def how_to_get(self) -> str:
        search = ("put the shared data folder on the search path with "
                  "LVMREPRO_DATA=/path/to/shared/data (make does this when ../shared/data exists)")
        if not self.has_source:
            return (f"it has no repository to download from ({self.note}); get the shared data folder, "
                    f"which holds it as {self.name!r}, and {search}")
        return (f"it is {self.repo_path!r} in github.com/{self.repository} at commit {self.commit[:12]} "
                f"({self.url}); {search}")


class Registry:
    """A table of :class:`~lvmrepro.datasets.registry.Entry` keyed by file name."""

    def __init__(self, entries):
        self.entries = {e.name: e for e in entries}

    @classmethod
    def from_tsv(cls, path_or_text) -> "Registry":
        text = Path(path_or_text).read_text() if isinstance(path_or_text, Path) else path_or_text
        reader = csv.DictReader(text.splitlines(), delimiter="\t")
        return cls(Entry(**{**row, "size": int(row["size"]), "note": row.get("note") or ""}) for row in reader)

    def __contains__(self, name):
        return name in self.entries

    def __len__(self):
        return len(self.entries)

    def names(self, prefix: str = ""):
        return sorted(n for n in self.entries if n.startswith(prefix))

    def entry(self, name: str) -> Entry:
        try:
            return self.entries[name]
        except KeyError:
            folder = name.split("/", 1)[0]
            near = self.names(folder + "/")[:5]
            hint = f"; files under {folder}/ include {near}" if near else (
                f"; registered folders: {sorted({n.split('/', 1)[0] for n in self.entries})}")
            raise ValueError(f"unknown data file {name!r}: it is not in the registry{hint}") from None

    def fetch(self, name: str) -> Path:
        """Return the local path of a verified copy of ``name`` (see the module docstring)."""
        entry = self.entry(name)
        looked = []
        for root in search_path():
            candidate = root / name
            looked.append(str(candidate))
            if candidate.is_dir():
                raise DataFileMissing(f"data file {name!r}: {candidate} is a folder, not the registered file; "
                                      f"{entry.how_to_get()}")
            if candidate.exists() and not candidate.is_file():
                raise DataFileMissing(f"data file {name!r}: {candidate} is not a regular file (a device, pipe or "
                                      f"socket); {entry.how_to_get()}")
            if candidate.is_file():
                if not os.access(candidate, os.R_OK):
                    raise DataFileMissing(f"data file {name!r} at {candidate} cannot be read (permission denied)")
                verify(candidate, entry)
                return candidate
        cached = cache_dir() / name
        looked.append(str(cached))
        if cached.is_file():
            verify(cached, entry)
            return cached
        if entry.url is None:
            raise DataFileMissing(f"data file {name!r} not found (looked in {looked}); {entry.how_to_get()}")
        if os.environ.get("LVMREPRO_OFFLINE") == "1":
            raise DataFileMissing(f"data file {name!r} not found (looked in {looked}) and downloads are "
                                  f"off (LVMREPRO_OFFLINE=1); {entry.how_to_get()}")
        return download(entry, looked)


def search_path() -> list[Path]:
    raw = os.environ.get("LVMREPRO_DATA", "")
    return [Path(p).expanduser() for p in raw.split(os.pathsep) if p]


def cache_dir() -> Path:
    explicit = os.environ.get("LVMREPRO_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    import pooch
    return Path(pooch.os_cache("lvmrepro"))


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@lru_cache(maxsize=None)
def _sha256_memo(path: str, size: int, mtime_ns: int) -> str:
    return file_sha256(Path(path))


def verify(path: Path, entry: Entry) -> None:
    """Raise unless ``path`` is a regular file with the registered size and sha256 -- the size first, so a
    replaced file (a 16 GB sparse file, a device) is refused before a byte is hashed."""
    import stat as _stat
    st = path.stat()
    if not _stat.S_ISREG(st.st_mode):
        raise ChecksumMismatch(f"data file {entry.name!r} at {path} is not a regular file; replace it with the "
                               f"original ({entry.how_to_get()}).")
    if st.st_size != entry.size:
        raise ChecksumMismatch(
            f"size mismatch for data file {entry.name!r} at {path}: {st.st_size} bytes, the registry expects "
            f"{entry.size}. The file is corrupt or not the registered one; replace it with the original "
            f"({entry.how_to_get()}).")
    digest = _sha256_memo(str(path.resolve()), st.st_size, st.st_mtime_ns)
    if digest != entry.sha256:
        raise ChecksumMismatch(
            f"checksum mismatch for data file {entry.name!r} at {path}: sha256 is {digest}, the registry "
            f"expects {entry.sha256}. The file is corrupt or not the registered one; replace it with the "
            f"original ({entry.how_to_get()}).")


def download(entry: Entry, looked: list[str]) -> Path:
    """Download ``entry`` into the cache with pooch; pooch verifies the sha256 before keeping it."""
    import pooch
    target = cache_dir() / entry.name
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        path = pooch.retrieve(entry.url, known_hash=f"sha256:{entry.sha256}", fname=target.name,
                              path=target.parent, progressbar=False)
    except ValueError as exc:  # pooch raises ValueError when the downloaded hash differs
        raise ChecksumMismatch(f"downloaded data file {entry.name!r} from {entry.url} does not match the "
                               f"registered sha256 {entry.sha256}: {exc}") from None
    except Exception as exc:  # no network, HTTP error, ...
        raise DataFileMissing(
            f"data file {entry.name!r} was not found (looked in {looked}) and could not be downloaded "
            f"from {entry.url}: {type(exc).__name__}: {exc}. To get it: {entry.how_to_get()}") from None
    return Path(path)


@lru_cache(maxsize=1)
def default_registry() -> Registry:
    text = resources.files("lvmrepro.datasets").joinpath(REGISTRY_FILE).read_text()
    return Registry.from_tsv(text)


def fetch(name: str) -> Path:
    """Verified local path of the registered data file ``name`` (recorded as an input of the active run,
    see :mod:`lvmrepro.provenance`)."""
    path = default_registry().fetch(name)
    record_provenance(name, default_registry().entry(name).sha256)
    return path
