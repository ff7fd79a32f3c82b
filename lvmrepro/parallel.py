"""Independent trials in parallel: joblib's process pool (loky) on this machine, or a Dask cluster.

:func:`parallel_map` is ``[func(x) for x in items]`` with a progress bar.  Results come back in the order
of ``items`` whatever the backend, each item carries its own seed, and each runs with BLAS limited to
one thread, so where (and beside what) a trial ran never changes the result.  Worker processes that go idle exit after :data:`IDLE_WORKER_TIMEOUT_S` seconds, and
an interrupted map shuts its pool down, so a killed or stopped run does not leave workers behind for
long.  :func:`use_scheduler` switches every later map to joblib's Dask backend on a ``dask.distributed``
cluster (``lvmrepro run --scheduler tcp://HOST:8786`` or ``LVMREPRO_SCHEDULER``).
"""
from __future__ import annotations

import os
import time
from typing import Callable

IDLE_WORKER_TIMEOUT_S = 10
_SCHEDULER: str | None = None
_CLIENT = None


def use_scheduler(address: str | None) -> None:
    """Send parallel maps to the Dask scheduler at ``address`` (None: back to local processes)."""
    global _SCHEDULER, _CLIENT
    if address is not None and (not isinstance(address, str) or not address.strip()):
        raise ValueError(f"the scheduler address must be like tcp://HOST:8786; got {address!r}")
    if _CLIENT is not None:
        _CLIENT.close()
        _CLIENT = None
    _SCHEDULER = address


def scheduler() -> str | None:
    return _SCHEDULER or os.environ.get("LVMREPRO_SCHEDULER") or None


def _dask_client(address: str):
    global _CLIENT
    if _CLIENT is None or _CLIENT.scheduler.address != address:
        try:
            from distributed import Client
        except ImportError:
            raise ValueError("a Dask scheduler was given but dask.distributed is not installed") from None
        try:
            _CLIENT = Client(address, timeout="10s", set_as_default=False)
        except OSError as exc:
            raise ValueError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    return _CLIENT


def _shutdown_local_pool() -> None:
    try:
        from joblib.externals.loky import get_reusable_executor
        get_reusable_executor().shutdown(wait=False, kill_workers=True)
    except Exception:  # noqa: BLE001 - best effort on the way out
        pass


def _one_thread(func, x):
    """One item with BLAS/OpenMP limited to one thread: results do not depend on how many threads the
    machine's BLAS would use (a threaded dot product sums in another order), and ``jobs`` workers do
    not oversubscribe the cores."""
    from threadpoolctl import threadpool_limits
    with threadpool_limits(limits=1):
        return func(x)


_WATCHDOG_STARTED = False


def _watch_parent(parent: int, interval_s: float = 0.5) -> None:
    """In a local worker: a daemon thread that ends the worker as soon as the run that started it is gone.
    Checking between items is not enough: an idle worker waits on its queue, and loky's idle timeout can
    stall for good when the run was killed while holding the pool's management lock."""
    global _WATCHDOG_STARTED
    if _WATCHDOG_STARTED:
        return
    import threading

    def watch():
        while True:
            if os.getppid() != parent:
                os._exit(0)
            time.sleep(interval_s)
    threading.Thread(target=watch, name="lvmrepro-parent-watch", daemon=True).start()
    _WATCHDOG_STARTED = True


def _guarded(func, x, parent: int):
    """Run one item in a local worker, unless the run that submitted it is gone (killed): then the worker
    quits at once instead of working through the rest of its batch (and, idle, within a second)."""
    if os.getppid() != parent:
        os._exit(0)
    _watch_parent(parent)
    return _one_thread(func, x)


def _longest_first(n: int, cost) -> list:
    """Positions 0..n-1 by decreasing ``cost`` (ties keep their order)."""
    if cost is None:
        return list(range(n))
    cost = [float(c) for c in cost]
    if len(cost) != n or not all(c == c for c in cost):
        raise ValueError(f"cost must give one number per item ({n}); got {len(cost)}")
    return sorted(range(n), key=lambda i: -cost[i])


def parallel_map(func: Callable, items, *, jobs: int = 1, desc: str = "", progress: bool = True,
                 cost=None) -> list:
    """``[func(x) for x in items]``.  ``cost``: an estimate of each item's work; in parallel, items are
    handed out longest first (so no long item starts last and runs alone), and the results still come
    back in the order of ``items``."""
    items = list(items)
    order = _longest_first(len(items), cost)
    show = progress and len(items) > 1
    address = scheduler()
    if address is None and (jobs == 1 or len(items) <= 1):
        it = items
        if show:
            from tqdm.auto import tqdm
            it = tqdm(items, desc=desc, leave=False)
        return [_one_thread(func, x) for x in it]
    results = _parallel(func, [items[i] for i in order], jobs, address, desc, show)
    out = [None] * len(items)
    for pos, i in enumerate(order):
        out[i] = results[pos]
    return out


def _parallel(func, items, jobs, address, desc, show) -> list:
    from joblib import Parallel, delayed, parallel_config
    if address is not None:
        client = _dask_client(address)
        config = parallel_config(backend="dask", client=client)
        n_jobs = -1
    else:
        config = parallel_config(backend="loky", idle_worker_timeout=IDLE_WORKER_TIMEOUT_S)
        n_jobs = jobs
    try:
        with config:
            if address is None:
                parent = os.getpid()
                calls = (delayed(_guarded)(func, x, parent) for x in items)
            else:
                calls = (delayed(_one_thread)(func, x) for x in items)
            gen = Parallel(n_jobs=n_jobs, return_as="generator")(calls)
            if show:
                from tqdm.auto import tqdm
                gen = tqdm(gen, total=len(items), desc=desc, leave=False)
            return list(gen)
    except BaseException:
        if address is None:
            _shutdown_local_pool()
        raise
