"""Learners that run together on one training set, their score products computed as one.

Scoring every latent position of a ragged training set (``Phi @ W.T``, :mod:`lvmrepro.engine.lssvm.models.ragged`)
reads the whole feature matrix for a handful of columns: it is memory-bound, and a product with several
weight matrices side by side costs little more than one.  :func:`run_together` runs independent
computations (e.g. the CCP, G-MM random and G-MM biased runs of one split and initialisation) in threads,
one per computation, that share a :class:`SharedProduct`: a thread that needs scores on the shared
training set waits until every other running thread needs scores too (or has finished), then one product
serves them all.

Results do not depend on the batching: each thread's weight block is padded to whole 4-row panels
(:meth:`~lvmrepro.engine.lssvm.models.ragged.RaggedClassModel.scores_many`), so its scores are the same floats as
its own product alone, and a batch always holds the next request of every running thread, ordered by
thread -- the same batches at every run.  Only one thread computes at a time (the others wait for their
scores or for the lock), so the computations run on one core, in lockstep.
"""
from __future__ import annotations

import threading

import numpy as np


class SharedProduct:
    """``Phi @ W.T`` for the threads of :func:`run_together` (see the module docstring)."""

    def __init__(self, X):
        self.X = X
        self._cond = threading.Condition()
        self._active = 0
        self._pending: dict[int, np.ndarray] = {}
        self._done: dict[int, np.ndarray] = {}
        self._local = threading.local()
        self.products = 0     # BLAS products computed
        self.requests = 0     # score requests served

    def product(self, W: np.ndarray) -> np.ndarray:
        """``X.Phi @ W.T``, batched with the other running threads' requests."""
        me = getattr(self._local, "member", None)
        if me is None:    # not one of the threads: compute alone
            return self.X.Phi @ W.T
        with self._cond:
            self._pending[me] = W
            self._flush()
            while me not in self._done:
                self._cond.wait()
            return self._done.pop(me)

    def _flush(self):
        """Compute the batch once every running thread waits for scores (called with the lock held)."""
        if not self._pending or len(self._pending) < self._active:
            return
        order = sorted(self._pending)
        blocks = [self._pending[m] for m in order]
        uniq, slot = {}, []
        for B in blocks:   # equal requests (e.g. every run's first solve from w = 0) are computed once
            slot.append(uniq.setdefault(B.tobytes(), (len(uniq), B))[0])
        mats = [B for _, B in sorted(uniq.values(), key=lambda t: t[0])]
        S = self.X.Phi @ np.concatenate(mats).T
        offs = np.concatenate([[0], np.cumsum([len(B) for B in mats])])
        for m, s in zip(order, slot):
            self._done[m] = S[:, offs[s]:offs[s + 1]]
        self.products += 1
        self.requests += len(order)
        self._pending.clear()
        self._cond.notify_all()

    def _enter(self, member: int):
        self._local.member = member

    def _leave(self):
        with self._cond:
            self._active -= 1
            self._flush()


def run_together(model, X, funcs) -> list:
    """Run ``funcs`` (callables without arguments) in one thread each, ``model``'s score products on ``X``
    shared (``model.shared`` is set for the duration); returns their results in order and re-raises the
    first exception.  With one function, it simply runs.  ``run_together.last`` holds the counts of the last
    call (``products`` computed, ``requests`` served)."""
    if len(funcs) <= 1:
        return [f() for f in funcs]
    shared = SharedProduct(X)
    shared._active = len(funcs)
    results, errors = [None] * len(funcs), [None] * len(funcs)

    def body(j):
        shared._enter(j)
        try:
            results[j] = funcs[j]()
        except BaseException as exc:   # noqa: BLE001 - re-raised in the caller's thread
            errors[j] = exc
        finally:
            shared._leave()

    previous, model.shared = model.shared, shared
    try:
        threads = [threading.Thread(target=body, args=(j,), name=f"lvmrepro-shared-{j}") for j in range(len(funcs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        model.shared = previous
    for exc in errors:
        if exc is not None:
            raise exc
    run_together.last = {"products": shared.products, "requests": shared.requests}
    return results
