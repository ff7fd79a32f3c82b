"""Which registered data files a run read: recorded through the run that is active in this context.

:func:`lvmrepro.experiments.run` opens a :func:`recording` around a target; every
:func:`lvmrepro.datasets.registry.fetch` inside it calls :func:`record`.  The recorder lives in a
:class:`contextvars.ContextVar`, so nested runs (a target that requires an upstream target) each get
their own record, and code outside any run records nothing.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

_ACTIVE: ContextVar[dict | None] = ContextVar("lvmrepro_data_record", default=None)


def record(name: str, sha256: str) -> None:
    """Note that the registered file ``name`` (with this checksum) was read by the active run."""
    rec = _ACTIVE.get()
    if rec is not None:
        rec[name] = sha256


def record_many(entries) -> None:
    """Record ``{"name": ..., "sha256": ...}`` entries (an upstream result's data files)."""
    for d in entries:
        record(d["name"], d["sha256"])


@contextmanager
def recording():
    """``with recording() as files:`` -- ``files`` maps name -> sha256 of every file read inside."""
    files: dict[str, str] = {}
    token = _ACTIVE.set(files)
    try:
        yield files
    finally:
        _ACTIVE.reset(token)
