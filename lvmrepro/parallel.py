"""Independent trials in parallel: joblib's process pool (loky) on this machine, or a Dask cluster.

:func:`parallel_map` is ``[func(x) for x in items]`` with a progress bar.  Results come back in the order
of ``items`` whatever the backend, each item carries its own seed, and each runs with BLAS limited to
one thread, so where (and beside what) a trial ran never changes the result.  Worker processes that go idle exit after :data:`IDLE_WORKER_TIMEOUT_S` seconds, and
an interrupted map shuts its pool down, so a killed or stopped run does not leave workers behind for
long.  :func:`use_scheduler` switches every later map to joblib's Dask backend on a ``dask.distributed``
cluster (``lvmrepro run --scheduler tcp://HOST:8786`` or ``LVMREPRO_SCHEDULER``).  A scheduler address is
checked before any work: its form (``tcp://HOST:PORT``), then a connection and the start of Dask's
handshake, all within :data:`SCHEDULER_TIMEOUT_S` (a port that accepts and never answers, or a peer that
answers as something else -- an HTTP server -- is a one-line error, not a hang or a huge allocation); the
client is closed at interpreter exit.
"""
from __future__ import annotations

import os
import socket
import struct
import sys
import time
from typing import Callable
from urllib.parse import urlsplit

IDLE_WORKER_TIMEOUT_S = 10
#: ``jobs`` may ask for at most this many worker processes per usable core (more only oversubscribes the
#: cores and can exhaust the process limit)
JOBS_PER_CORE = 4
#: seconds a scheduler has to accept a connection and start Dask's handshake (a scheduler answers in
#: milliseconds; a silent peer must not hold a run for long)
SCHEDULER_TIMEOUT_S = 5.0
#: seconds Dask's client then has to connect (after the probe passed) and to close
CLIENT_TIMEOUT_S = 10.0
#: the largest first handshake message a Dask scheduler sends (a few hundred bytes in practice)
MAX_HANDSHAKE_BYTES = 1 << 20
_SCHEDULER: str | None = None
_CLIENT = None


def use_scheduler(address: str | None) -> None:
    """Send parallel maps to the Dask scheduler at ``address`` (None: back to local processes).  The address
    is checked and the scheduler probed (:func:`probe_scheduler`) here, before any work."""
    global _SCHEDULER
    if address is not None:
        probe_scheduler(address)
    _close_client()
    _SCHEDULER = address


def parse_scheduler_address(address) -> tuple[str, int]:
    """``(host, port)`` of ``tcp://HOST:PORT`` (IPv6 hosts in brackets), or a one-line ValueError."""
    form = f"the scheduler address must be like tcp://HOST:8786; got {address!r:.80}"
    if not isinstance(address, str) or not address.strip() or any(c.isspace() for c in address.strip()):
        raise ValueError(form)
    try:
        parts = urlsplit(address.strip())
        host, port = parts.hostname, parts.port
    except ValueError:
        raise ValueError(form) from None
    if parts.scheme != "tcp" or not host or port is None or parts.path not in ("", "/") or parts.query \
            or parts.username or parts.password:
        raise ValueError(form)
    if not 1 <= port <= 65535:
        raise ValueError(form)
    return host, port


def probe_scheduler(address, timeout: float = SCHEDULER_TIMEOUT_S) -> None:
    """Connect to ``address`` and read the first message of Dask's handshake (a scheduler sends it as soon as
    it accepts), all within ``timeout`` seconds; a one-line ValueError if the address is malformed, nothing
    answers, or the peer does not speak Dask's protocol.  Dask's own client would wait on a silent peer
    beyond its timeout and size its read buffer from whatever 8 bytes an HTTP server sends first."""
    host, port = parse_scheduler_address(address)
    deadline = time.monotonic() + timeout

    def remaining():
        left = deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout()
        return left
    try:
        with socket.create_connection((host, port), timeout=remaining()) as sock:
            head = b""
            while len(head) < 8:
                sock.settimeout(remaining())
                chunk = sock.recv(8 - len(head))
                if not chunk:
                    raise ValueError(f"the Dask scheduler at {address} closed the connection during the handshake")
                head += chunk
            (nbytes,) = struct.unpack("<Q", head)
            if not 0 < nbytes <= MAX_HANDSHAKE_BYTES:
                raise ValueError(f"{address} answered, but not as a Dask scheduler (it sent {head!r:.40} where a "
                                 "handshake starts)")
            got = 0
            while got < nbytes:
                sock.settimeout(remaining())
                chunk = sock.recv(min(65536, nbytes - got))
                if not chunk:
                    raise ValueError(f"the Dask scheduler at {address} closed the connection during the handshake")
                got += len(chunk)
    except socket.timeout:
        raise ValueError(f"the Dask scheduler at {address} did not answer within {timeout:g} s") from None
    except OSError as exc:
        raise ValueError(f"cannot reach the Dask scheduler at {address}: {exc.strerror or exc}") from None


def _close_client() -> None:
    global _CLIENT
    if _CLIENT is not None:
        client, _CLIENT = _CLIENT, None
        try:
            client.close(timeout=CLIENT_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - best effort: the scheduler may be gone
            pass


import atexit as _atexit  # noqa: E402 - registered next to what it closes

_atexit.register(_close_client)


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system says, else the CPU count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def max_jobs() -> int:
    """The most parallel workers ``jobs`` may ask for: :data:`JOBS_PER_CORE` per usable core."""
    return JOBS_PER_CORE * usable_cores()


def scheduler() -> str | None:
    return _SCHEDULER or os.environ.get("LVMREPRO_SCHEDULER") or None


def _dask_client(address: str):
    global _CLIENT
    if _CLIENT is None or _CLIENT.scheduler.address != address:
        try:
            from distributed import Client
        except ImportError:
            raise ValueError("a Dask scheduler was given but dask.distributed is not installed") from None
        probe_scheduler(address)    # an address from LVMREPRO_SCHEDULER is first seen here
        _close_client()
        try:
            _CLIENT = Client(address, timeout=f"{CLIENT_TIMEOUT_S:g}s", set_as_default=False)
        except (OSError, TimeoutError) as exc:
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


def progress_bar(iterable, **kwargs):
    """A tqdm progress bar: the notebook widget where ipywidgets is installed; in a Jupyter kernel without it, none
    (a text bar would only reach the notebook as raw carriage-return lines on stderr, after tqdm.auto's "IProgress
    not found" warning); the text bar in a terminal. ``TQDM_DISABLE=1`` turns it off everywhere."""
    from tqdm import tqdm
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        if _in_kernel():
            kwargs["disable"] = True
        return tqdm(iterable, **kwargs)
    from tqdm.auto import tqdm as auto_tqdm
    return auto_tqdm(iterable, **kwargs)


def _in_kernel() -> bool:
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


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
            it = progress_bar(items, desc=desc, leave=False)
        return [_one_thread(func, x) for x in it]
    # never more workers than items: 30 jobs for 3 trials would start 30 processes to run 3
    workers = len(items) if jobs == -1 else min(jobs, len(items))
    results = _parallel(func, [items[i] for i in order], workers, address, desc, show)
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
                gen = progress_bar(gen, total=len(items), desc=desc, leave=False)
            return list(gen)
    except BaseException:
        if address is None:
            _shutdown_local_pool()
        raise
