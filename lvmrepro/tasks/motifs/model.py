"""The motif-finding latent SSVM of Yu & Joachims (ICML 2009, section 4.1), SPL's section 5.2 model.

Inputs ``X``: DNA sequences of one length ``L`` as an (n, L) uint8 array of base codes 0..3
(A, C, G, T; :func:`lvmrepro.tasks.motifs.data.encode`).  Outputs ``y`` in {+1, -1}.  The latent
value of a positive sequence is the start ``h`` (0 <= h < ``n_starts``) of a motif of length ``m``;
a negative sequence has no motif and its latent value is ``-1`` (``NO_MOTIF``; the oracles also accept, and ignore, a start there).

Parameters ``w = (W, b)``: ``W`` (m x 4) scores the motif's bases position by position (a one-hot
position-specific weight matrix), ``b`` (4**k) scores background words, the k-mers ``kmer[j]``
starting at ``j = 0 .. L-k``.  The joint feature vector is Yu & Joachims' (their code, which the SPL
authors extended: ``svm_struct_latent_api.c`` in ``dgboy2000/spl``):

    phi(x, -1)    = ( 0,                 sum_{all j}             e_{kmer[j]} )
    phi(x, +1, h) = ( onehot(x[h:h+m]),  sum_{j not in h..h+m-1}  e_{kmer[j]} )

-- the m words starting inside the motif leave the background.  Hence

    w.phi(x, +1, h) - w.phi(x, -1) = diff(h) = sum_{p<m} ( W[p, x[h+p]] - b[kmer[h+p]] ),

the quantity the scan kernel :mod:`lvmrepro.engine._kernels.motif_scan` computes for every start, in a fixed
order that gives starts whose windows hold the same bases the same value.  The loss is 0-1.  The three
inferences follow from ``best = max_h diff(h)``:

* latent completion: ``h = `` the first (lowest) start attaining ``best`` for a positive, ``-1`` for a
  negative;
* prediction: ``+1`` iff ``best > 0`` (a tie predicts -1, as the authors' code does);
* loss-augmented: for ``y = +1`` compare ``best`` with ``1`` (the -1 label plus its loss), for
  ``y = -1`` compare ``best + 1`` with ``0``; a tie keeps the true label (the constraint is then void;
  the authors' code picks the wrong label at an exact tie for ``y = +1``, which changes no slack).

Conventions, with the authors' code:

* **word length.**  ``order`` = k is the length of the background words, the authors' ``--o`` option
  (default 2: dinucleotide counts, i.e. a Markov chain of order k - 1 over bases); the paper's text
  says k = 3.  At most 6 (the scan's tables hold ``4**(k+1)`` entries).
* **starts.**  ``n_starts`` candidate starts ``0 .. n_starts - 1``, at most ``L - m - k + 2`` (the last
  word removed must exist); the default is the authors' ``L - m - k`` (their last start is ``L - m - k - 1``).
  :func:`probe_motif_model` sets them for the 60-nt PBM probes (36-nt variable region + constant 24-nt
  primer): ``primer="overlap"`` (default, as the authors) lets the motif cover primer bases, and
  ``primer="exclude"`` keeps it inside the variable region.
* **the background of a sequence** counts all ``L - k + 1`` words; the authors' count skips the last
  one.  That word is in ``phi`` of every label (no motif reaches it), so it cancels from every score
  difference and changes no inference, slack or objective beyond its ``b`` weight's share of
  ``||w||^2``, which the optimum sets to 0.
"""
from __future__ import annotations

import numpy as np

from lvmrepro.engine.kernels import (MAX_MOTIF_ORDER, check_dna_codes, motif_feature_counts, motif_scores_at,
                              motif_start_scores)
from lvmrepro.engine.lssvm.base import EnumerableLatent, InferenceTerms, LatentModel
from lvmrepro.engine.lssvm.features import LatentTable
from lvmrepro.engine.lssvm.inner.motif_dcd import MotifWindows
from lvmrepro.engine.validation import as_weight_vector

NO_MOTIF = -1
#: the longest sequence a model takes (the UniPROBE probes have 60 bases)
MAX_SEQ_LENGTH = 10_000
PRIMER_POLICIES = ("overlap", "exclude")


def kmer_indices(codes: np.ndarray, order: int) -> np.ndarray:
    """(n, L - k + 1) int64: the index ``sum_t x[j+t] 4**(k-1-t)`` of the k-mer starting at each ``j``."""
    J = codes.shape[1] - order + 1
    out = np.zeros((codes.shape[0], J), dtype=np.int64)
    for t in range(order):
        out *= 4
        out += codes[:, t:t + J]
    return out


class MotifModel(LatentModel, EnumerableLatent):
    """Binary motif latent SSVM (see the module docstring).  ``backend="numpy"`` scans with the
    plain reference kernel (tests)."""

    def __init__(self, motif_length: int = 10, order: int = 2, seq_length: int = 60,
                 n_starts: int | None = None, *, backend: str = "cython"):
        for name, val in (("motif_length", motif_length), ("order", order), ("seq_length", seq_length)):
            if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < 1:
                raise ValueError(f"{name} must be a positive integer; got {val!r}")
        if seq_length > MAX_SEQ_LENGTH:     # sizes w and the per-start arrays: 10^12 ran out of memory
            raise ValueError(f"seq_length must be at most {MAX_SEQ_LENGTH}; got {seq_length}")
        max_starts = seq_length - motif_length - order + 2
        if order > MAX_MOTIF_ORDER or max_starts < 1:
            raise ValueError(f"need order <= {MAX_MOTIF_ORDER} and motif_length + order <= seq_length + 1 (a motif "
                             f"removes the words that start inside it); got m={motif_length}, k={order}, L={seq_length}")
        n_starts = max(1, seq_length - motif_length - order) if n_starts is None else n_starts
        if isinstance(n_starts, bool) or not isinstance(n_starts, (int, np.integer)) or not 1 <= n_starts <= max_starts:
            raise ValueError(f"n_starts must be an integer in 1..{max_starts}; got {n_starts!r}")
        if backend not in ("cython", "numpy"):
            raise ValueError(f"unknown backend {backend!r}; use 'cython' or 'numpy'")
        self.motif_length, self.order, self.seq_length = int(motif_length), int(order), int(seq_length)
        self.n_starts, self.backend = int(n_starts), backend
        self.size_motif = 4 * self.motif_length
        self.size_w = self.size_motif + 4 ** self.order
        self._last_scan = None    # (w bytes, sequences, (start, best, background)): see _scan

    def __repr__(self):
        return (f"MotifModel(motif_length={self.motif_length}, order={self.order}, seq_length={self.seq_length}, "
                f"n_starts={self.n_starts})")

    # ----------------------------------------------------------------- checks and helpers
    def check_inputs(self, X) -> np.ndarray:
        codes = check_dna_codes(X, "X")
        if codes.shape[1] != self.seq_length:
            raise ValueError(f"X has sequences of length {codes.shape[1]}; the model expects {self.seq_length}")
        return codes

    def check_w(self, w) -> np.ndarray:
        return as_weight_vector(w, self.size_w)   # finite, and small enough that the scores cannot overflow

    def check_outputs(self, X, Y) -> np.ndarray:
        Y = np.asarray(Y)
        if Y.shape != (self.n_samples(X),):
            raise ValueError(f"Y must have shape ({self.n_samples(X)},); got {Y.shape}")
        if not np.issubdtype(Y.dtype, np.integer) and not np.all(np.mod(Y, 1) == 0):
            raise ValueError("Y must hold the labels +1 and -1")
        Y = Y.astype(np.int64)
        if np.any((Y != 1) & (Y != -1)):
            raise ValueError(f"Y must hold the labels +1 and -1; found {sorted(set(Y.tolist()) - {1, -1})[:3]}")
        return Y

    def check_latent(self, X, H, Y=None) -> np.ndarray:
        """Latent values in ``-1..n_starts-1``.  With ``Y``: a positive needs a start (not ``-1``); a
        negative's value is ignored by phi and returned as ``-1`` (so candidate indices read without
        labels, see :meth:`latent_at`, are accepted)."""
        H = np.asarray(H)
        if H.shape != (self.n_samples(X),) or not np.issubdtype(H.dtype, np.integer):
            raise ValueError(f"H must be an integer array of shape ({self.n_samples(X)},); got {H.dtype} {H.shape}")
        H = H.astype(np.int64)
        bad = (H < NO_MOTIF) | (H >= self.n_starts)
        if Y is not None:
            bad |= (Y == 1) & (H == NO_MOTIF)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            what = "" if Y is None else f" with label {int(Y[i]):+d}"
            raise ValueError(f"latent value {int(H[i])} of example {i}{what} is invalid: a positive needs a start in "
                             f"0..{self.n_starts - 1}, a negative has {NO_MOTIF} (or any start, ignored)")
        return H if Y is None else np.where(Y == 1, H, NO_MOTIF)

    def split_w(self, w) -> tuple[np.ndarray, np.ndarray]:
        """``(W, b)``: the (m, 4) motif weights and the (4**k,) background weights (views of ``w``)."""
        w = np.asarray(w, dtype=np.float64)
        return w[:self.size_motif].reshape(self.motif_length, 4), w[self.size_motif:]

    def _scan(self, w, codes, best_only: bool):
        w = self.check_w(w)
        W, b = self.split_w(w)
        if not best_only:
            return motif_start_scores(codes, W, b, self.order, self.n_starts, backend=self.backend)
        # A learner asks for the best starts at one w several times (the solver's last gap check, the
        # objective's loss-augmented maxima and completions, the next imputation): the last scan is kept and
        # reused when w and the sequences are the same -- compared by value (a copy of the sequences is
        # kept), so sequences refilled in place are scanned afresh.
        last = self._last_scan
        if (last is not None and last[0] == w.tobytes() and last[1].shape == codes.shape
                and np.array_equal(last[1], codes)):
            return tuple(a.copy() for a in last[2])
        out = motif_start_scores(codes, W, b, self.order, self.n_starts, best_only=True, backend=self.backend)
        self._last_scan = (w.tobytes(), codes.copy(), tuple(a.copy() for a in out))
        return out

    def start_scores(self, w, X) -> tuple[np.ndarray, np.ndarray]:
        """``(diff, background)``: ``diff[i, h] = w.phi(x_i, +1, h) - w.phi(x_i, -1)`` for every start
        and ``background[i] = w.phi(x_i, -1)``."""
        return self._scan(w, self.check_inputs(X), best_only=False)

    def best_starts(self, w, X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(start, best, background)``: the first maximiser of ``diff``, ``max_h diff`` and ``w.phi(x, -1)``."""
        return self._scan(w, self.check_inputs(X), best_only=True)

    # ----------------------------------------------------------------- the LatentModel oracles
    def n_samples(self, X) -> int:
        return int(np.shape(X)[0])

    def joint_feature(self, X, i, y, h) -> np.ndarray:
        """``phi(x_i, y, h)`` straight from the definition (k-mers counted segment by segment)."""
        x = self.check_inputs(X)[i]
        phi = np.zeros(self.size_w)
        removed = range(0)
        if y == 1:
            if not 0 <= h < self.n_starts:
                raise ValueError(f"a positive needs a start in 0..{self.n_starts - 1}; got {h}")
            for p in range(self.motif_length):
                phi[4 * p + x[h + p]] += 1.0
            removed = range(h, h + self.motif_length)
        elif y != -1:
            raise ValueError(f"y must be +1 or -1; got {y!r}")
        for j in range(len(x) - self.order + 1):
            if j not in removed:
                index = 0
                for base in x[j:j + self.order]:
                    index = 4 * index + int(base)
                phi[self.size_motif + index] += 1.0
        return phi

    def feature_sum(self, X, Y, H, weights) -> np.ndarray:
        """``sum_i weights_i phi(x_i, y_i, h_i)`` (one pass of the counting kernel)."""
        codes = self.check_inputs(X)
        Y = self.check_outputs(codes, Y)
        H = self.check_latent(codes, H, Y)
        c = np.asarray(weights, dtype=np.float64)
        if c.shape != Y.shape or not np.all(np.isfinite(c)):
            raise ValueError(f"weights must be finite with shape {Y.shape}; got {c.shape}")
        motif, background = motif_feature_counts(codes, H, c, self.motif_length, self.order, backend=self.backend)
        return np.concatenate([motif.ravel(), background])

    def score(self, w, X, Y, H) -> np.ndarray:
        """``w.phi(x_i, y_i, h_i)`` for every example: ``background + diff(h_i)`` for a positive."""
        codes = self.check_inputs(X)
        Y = self.check_outputs(codes, Y)
        H = self.check_latent(codes, H, Y)
        W, b = self.split_w(self.check_w(w))
        diff, background = motif_scores_at(codes, W, b, self.order, H, backend=self.backend)
        return background + diff

    def loss(self, Y_true, Y_pred, H_pred=None) -> np.ndarray:
        return (np.asarray(Y_true) != np.asarray(Y_pred)).astype(np.float64)

    def impute_latent(self, w, X, Y):
        codes = self.check_inputs(X)
        Y = self.check_outputs(codes, Y)
        start, best, background = self._scan(w, codes, best_only=True)
        return self._completion(Y, start, best, background)

    @staticmethod
    def _completion(Y, start, best, background):
        pos = Y == 1
        return np.where(pos, start, NO_MOTIF), background + np.where(pos, best, 0.0)

    @staticmethod
    def _loss_augmented(Y, start, best, background):
        # value of the +1 label: background + best (+1 loss if y = -1); of the -1 label: background (+1 if y = +1)
        plus = np.where(Y == 1, best >= 1.0, best + 1.0 > 0.0)
        ybar = np.where(plus, 1, -1).astype(np.int64)
        aug = background + np.where(plus, best + (Y == -1), (Y == 1).astype(np.float64))
        return ybar, np.where(plus, start, NO_MOTIF), aug

    def loss_augmented_inference(self, w, X, Y):
        codes = self.check_inputs(X)
        Y = self.check_outputs(codes, Y)
        return self._loss_augmented(Y, *self._scan(w, codes, best_only=True))

    def inference_terms(self, w, X, Y, H=None, complete: bool = True) -> InferenceTerms:
        """Loss-augmented maxima and latent completions from one scan (the completion comes free
        with the scan, so it is filled whatever ``complete`` says)."""
        codes = self.check_inputs(X)
        Y = self.check_outputs(codes, Y)
        scan = self._scan(w, codes, best_only=True)
        ybar, hbar, aug = self._loss_augmented(Y, *scan)
        h_best, best = self._completion(Y, *scan)
        fixed = None if H is None else self.score(w, codes, Y, H)
        return InferenceTerms(aug=aug, ybar=ybar, hbar=hbar, best=best, h_best=h_best, fixed=fixed)

    def predict(self, w, X):
        start, best, _ = self.best_starts(w, X)
        plus = best > 0.0
        return np.where(plus, 1, -1).astype(np.int64), np.where(plus, start, NO_MOTIF)

    def init_latent(self, X, Y, how: str = "random", rng: np.random.Generator | None = None):
        """``how="random"``: uniform starts for the positives, one draw per example in order (the
        same generator state gives the same starts whatever the labels); ``-1`` for the negatives."""
        codes = self.check_inputs(X)
        Y = self.check_outputs(codes, Y)
        if how != "random":
            raise ValueError(f"unknown latent initialisation {how!r}; the motif model has 'random'")
        if not isinstance(rng, np.random.Generator):
            raise ValueError("init_latent(how='random') needs a numpy.random.Generator (seeded per trial)")
        starts = rng.integers(0, self.n_starts, size=len(Y))
        return np.where(Y == 1, starts, NO_MOTIF).astype(np.int64)

    # ----------------------------------------------------------------- EnumerableLatent
    def latent_table(self, w, X, Y, examples=None) -> LatentTable:
        """Candidates of ``examples`` (default: all, in order): every start for a positive (value
        ``background + diff(h)``), the single value ``-1`` for a negative (value ``background``)."""
        codes = self.check_inputs(X)
        Y = self.check_outputs(codes, Y)
        if examples is not None:
            idx = np.asarray(examples, dtype=np.int64)
            if idx.ndim != 1 or np.any(idx < 0) or np.any(idx >= len(Y)):
                raise ValueError(f"examples must be indices in 0..{len(Y) - 1}")
            codes, Y = codes[idx], Y[idx]
        diff, background = self._scan(w, codes, best_only=False)
        counts = np.where(Y == 1, self.n_starts, 1).astype(np.int64)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        keep = np.arange(self.n_starts)[None, :] < counts[:, None]
        values = np.where(Y[:, None] == 1, diff, 0.0) + background[:, None]
        return LatentTable(values[keep], starts, counts)

    def latent_at(self, X, index, Y=None) -> np.ndarray:
        """Candidate indices back to latent values.  The candidates of a negative depend on its label,
        which this interface does not pass: without ``Y`` index ``j`` is read as start ``j`` (for a
        negative, 0 -- ignored by every oracle, but not the canonical ``-1`` that
        :meth:`impute_latent` returns, so :meth:`latent_changed` would see a change); with ``Y``
        negatives get ``-1``."""
        index = np.asarray(index, dtype=np.int64)
        if index.shape != (self.n_samples(X),) or np.any(index < 0) or np.any(index >= self.n_starts):
            raise ValueError(f"index must be ({self.n_samples(X)},) candidate numbers in 0..{self.n_starts - 1}")
        if Y is None:
            return index.copy()
        Y = self.check_outputs(X, Y)
        return np.where(Y == 1, index, NO_MOTIF)

    def latent_index(self, X, H) -> np.ndarray:
        H = self.check_latent(X, H)
        return np.where(H == NO_MOTIF, 0, H)

    # ----------------------------------------------------------------- the dual solver's capability
    def motif_windows(self, X) -> MotifWindows:
        """The sequences as base codes and the shape of the states (for
        :class:`~lvmrepro.engine.lssvm.inner.motif_dcd.MotifDualCD`)."""
        return MotifWindows(np.ascontiguousarray(self.check_inputs(X)), self.motif_length, self.order, self.n_starts)

    # ----------------------------------------------------------------- motif occurrences
    def occurrences(self, X, Y, H) -> np.ndarray:
        """(n_positive, m) codes of the motif occurrence of every positive example."""
        codes = self.check_inputs(X)
        Y = self.check_outputs(codes, Y)
        H = self.check_latent(codes, H, Y)
        pos = np.flatnonzero(Y == 1)
        return codes[pos[:, None], H[pos][:, None] + np.arange(self.motif_length)]


def probe_motif_model(motif_length: int = 10, order: int = 2, primer: str = "overlap", *,
                      backend: str = "cython") -> MotifModel:
    """The model for the 60-nt UniPROBE probes (36-nt variable region + 24-nt constant primer).

    ``primer="overlap"``: the authors' starts ``0 .. 60 - m - k - 1``, so the motif may cover primer
    bases; ``"exclude"``: it must lie in the variable region (``0 .. 36 - m``).
    """
    from lvmrepro.tasks.motifs.data import PROBE_LENGTH, VARIABLE_LENGTH
    if primer not in PRIMER_POLICIES:
        raise ValueError(f"primer must be one of {PRIMER_POLICIES}; got {primer!r}")
    if primer == "exclude" and not 1 <= motif_length <= VARIABLE_LENGTH:
        raise ValueError(f"a motif of length {motif_length} does not fit in the {VARIABLE_LENGTH}-nt variable region")
    n_starts = PROBE_LENGTH - motif_length - order if primer == "overlap" else VARIABLE_LENGTH - motif_length + 1
    return MotifModel(motif_length, order, PROBE_LENGTH, n_starts=n_starts, backend=backend)
