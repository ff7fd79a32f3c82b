"""Which registered data files a run read, and on what machine it ran.

Data: recorded through the run that is active in this context.

:func:`lvmrepro.experiments.run` opens a :func:`recording` around a target; every
:func:`lvmrepro.datasets.registry.fetch` inside it calls :func:`record`.  The recorder lives in a
:class:`contextvars.ContextVar`, so nested runs (a target that requires an upstream target) each get
their own record, and code outside any run records nothing.
"""
from __future__ import annotations

import os
import platform
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

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


def cpu_model() -> str:
    """The CPU's model name (Linux ``/proc/cpuinfo``, else what the platform module reports)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def thread_pools() -> list[dict]:
    """The BLAS/OpenMP libraries loaded in this process, as threadpoolctl reports them (after loading NumPy and
    SciPy's BLAS): API, implementation, version, threads, core type (no file paths)."""
    try:
        import numpy  # noqa: F401
        import scipy.linalg  # noqa: F401
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    keep = ("user_api", "internal_api", "version", "num_threads", "architecture", "threading_layer")
    return [{k: p.get(k) for k in keep} for p in threadpool_info()]


def machine() -> dict:
    """What a floating-point result can depend on beyond the code, data and seeds: the CPU model and the BLAS
    kernels chosen for it (another core type sums in another order; a learner's non-convex path can then end
    elsewhere)."""
    blas = sorted({f"{p.get('internal_api')} {p.get('version')} {p.get('architecture')}"
                   for p in thread_pools() if p.get("user_api") == "blas"})
    return {"cpu_model": cpu_model(), "blas": blas, "numpy_simd": numpy_simd(),
            "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE")}


def numpy_simd() -> list[str]:
    """The SIMD targets NumPy's ufuncs dispatch to on this CPU (another set: other reduction orders)."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:          # another NumPy layout: not recorded
        return []
    return [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]
