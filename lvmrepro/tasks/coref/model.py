"""The latent coreference model of Yu & Joachims (ICML 2009), as used in SPL Figure 1.

For a document with mentions ``1..n`` and pair features ``x_ij`` (:mod:`lvmrepro.tasks.coref.features`):

* output ``y``: a clustering of the mentions -- an int64 array of cluster ids numbered by first
  mention (:func:`lvmrepro.tasks.coref.data.canonical_clustering`);
* latent ``h``: a spanning forest whose trees are ``y``'s clusters -- an int64 parent array rooted at
  each tree's smallest mention (:mod:`lvmrepro.tasks.coref.forest`);
* joint feature ``phi(x, y, h) = sum_{(i,j) in h} x_ij``, so ``w.phi = sum of the forest's edge scores
  s_ij = w.x_ij``.

Oracles (``X`` a :class:`~lvmrepro.tasks.coref.features.PairFeatures`; ``Y``, ``H`` lists, one array per document):

* latent completion ``argmax_h w.phi(x, y, h)``: a maximum spanning tree inside every gold cluster --
  exact (Prim on each cluster's complete graph);
* prediction ``argmax_{y,h} w.phi``: the maximum-weight forest, i.e. the maximum spanning forest of the
  positive edges; ``y`` = its trees -- exact;
* loss-augmented inference ``argmax_{y,h} w.phi + Delta``:

  - ``loss="mitre"``: ``Delta_M`` is a constant plus a sum over forest edges
    (:mod:`lvmrepro.tasks.coref.losses`), so it is the maximum spanning forest of the positive edges with
    weights ``s_ij - 100/L`` (gold-coreferent) or ``s_ij + r 100/L`` (not) -- **exact**;
  - ``loss="pairwise"``: ``Delta_P`` depends on the whole clustering (the exact problem is a
    correlation clustering); the Kruskal-style greedy of Finley & Joachims' kind
    (:func:`lvmrepro.tasks.coref.forest.greedy_pairwise_clustering`), then the best forest of the clusters
    it found, and the best of that, the gold clustering, the plain prediction, one cluster and all
    singletons -- **approximate**: a valid clustering whose augmented score is at least that of each of
    those; tests measure its gap to the optimum on small documents, and
    :func:`lvmrepro.tasks.coref.losses.canonical_pairwise_loss` says why the greedy alone is far from it on full
    documents. Yu & Joachims' own code trains only with the forest-decomposable link loss (the MITRE case above).

Losses: :meth:`CorefModel.loss` gives ``Delta`` per document (``H_pred`` given: the MITRE forest loss the
inference maximises; ``None``: its minimum over forests, the clustering's MUC link error).
"""
from __future__ import annotations

import numpy as np

from lvmrepro.tasks.coref import losses as L
from lvmrepro.tasks.coref.clusterings import chain_forest, outputs_of, random_spanning_forest  # noqa: F401
from lvmrepro.tasks.coref.features import N_FEATURES, PairFeatures, n_pairs, pair_index
from lvmrepro.tasks.coref.forest import (
    BUCKET_MAX_FRACTION, bucket_kernel, bucket_scratch, check_backend, check_forest, check_labels, fast_canonical,
    forest_clustering, forest_edges, forest_kernel, forest_pairs, greedy_kernel, max_spanning_forest,
    split_buckets, table_scores, value_rank,
)
from lvmrepro.tasks.coref.data import canonical_clustering
from lvmrepro.engine._kernels import coref as _coref, coref_rows as _coref_rows
from lvmrepro.engine.lssvm.base import InferenceTerms, LatentModel
from lvmrepro.engine.validation import as_weight_vector

LOSSES = ("mitre", "pairwise")
FOREST_METHODS = ("bucket", "prim")
INIT_RULES = ("chain", "random")


class CorefModel(LatentModel):
    """Latent spanning-forest coreference model; ``loss`` is 'mitre' or 'pairwise' (module docstring).

    ``wrong_link_cost`` is Yu & Joachims' ``r`` of the MITRE loss; ``greedy_passes`` bounds the passes
    of the pairwise greedy.  ``backend="numpy"`` runs the plain references of the forest kernels.
    ``forest``: the maximum spanning forests of prediction and MITRE loss-augmented inference by
    Kruskal over feature-row buckets (``"bucket"``, the default: cost ~ the pairs above the threshold)
    or by Prim on the complete graph (``"prim"``, O(n^2)); both are exact (same weight, same trees).
    """

    def __init__(self, loss: str = "mitre", *, n_features: int = N_FEATURES, wrong_link_cost: float = 1.0,
                 greedy_passes: int = 50, backend: str = "cython", forest: str = "bucket"):
        if loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}; got {loss!r}")
        if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)) or n_features < 1:
            raise ValueError(f"n_features must be a positive integer; got {n_features!r}")
        if not (np.isfinite(wrong_link_cost) and wrong_link_cost > 0):
            raise ValueError(f"wrong_link_cost must be finite and > 0; got {wrong_link_cost!r}")
        self.loss_kind = loss
        self.size_w = int(n_features)
        self.wrong_link_cost = float(wrong_link_cost)
        self.greedy_passes = int(greedy_passes)
        self.backend = check_backend(backend)
        if forest not in FOREST_METHODS:
            raise ValueError(f"forest must be one of {FOREST_METHODS}; got {forest!r}")
        self.forest = forest

    # ----------------------------------------------------------------- checks
    def _check_X(self, X) -> PairFeatures:
        if not isinstance(X, PairFeatures):
            raise ValueError(f"X must be a PairFeatures (lvmrepro.tasks.coref.features); got {type(X).__name__}")
        if X.n_features != self.size_w:
            raise ValueError(f"X has {X.n_features} features per pair but the model has size_w={self.size_w}")
        return X

    def _check_w(self, w) -> np.ndarray:
        return as_weight_vector(w, self.size_w)   # finite, and small enough that pair scores cannot overflow

    def n_samples(self, X) -> int:
        return len(self._check_X(X))

    def check_outputs(self, X, Y):
        X = self._check_X(X)
        if len(Y) != len(X):
            raise ValueError(f"Y has {len(Y)} clusterings for {len(X)} documents")
        return [canonical_clustering(check_labels(y, int(n), f"clustering of document {d}"))
                for d, (y, n) in enumerate(zip(Y, X.n_mentions))]

    def check_latent(self, X, H):
        return self._checked_forests(self._check_X(X), H)

    def _checked_forests(self, X, H) -> list:
        """Every document's forest in ``H`` checked (:func:`check_forest`: int64, one-line ValueError naming the
        document).  The last list whose forests were all read-only arrays owning their data (the model's own
        latent completions) is remembered with ``X``: the learners hand those same arrays to check_latent,
        joint_features, score and inference_terms several times per fit step, and such an array cannot have
        changed, so they are checked once (issue 33); any other array is checked on every call."""
        if len(H) != len(X):
            raise ValueError(f"H has {len(H)} forests for {len(X)} documents")
        kept = self.__dict__.get("_checked_latent")
        if kept is not None and kept[0] is X and kept[1] == X.version and all(h is k for h, k in zip(H, kept[2])) \
                and not any(k.flags.writeable for k in kept[2]):
            return list(kept[2])
        out = [check_forest(h, int(n), f"forest of document {d}") for d, (h, n) in enumerate(zip(H, X.n_mentions))]
        if all(o is h and not o.flags.writeable and o.flags.owndata for o, h in zip(out, H)):
            self._checked_latent = (X, X.version, tuple(out))
        return out

    def check_pair(self, X, Y, H):
        """Check that every forest's trees are the clusters of its clustering (a valid ``(y, h)``)."""
        Y, H = self.check_outputs(X, Y), self.check_latent(X, H)
        for d, (y, h) in enumerate(zip(Y, H)):
            if not np.array_equal(forest_clustering(h), y):
                raise ValueError(f"document {d}: the forest's trees are not the clusters of the clustering")
        return Y, H

    # ----------------------------------------------------------------- features and scores
    def joint_feature(self, X, i: int, y, h) -> np.ndarray:
        X = self._check_X(X)
        rows = X.index[i][forest_pairs(check_forest(h, int(X.n_mentions[i])))]
        return X.table[rows].sum(axis=0)

    def feature_sum(self, X, Y, H, weights) -> np.ndarray:
        """``sum_d weights_d sum_{(i,j) in h_d} x_ij``: one weighted bincount over the table rows."""
        X = self._check_X(X)
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != (len(X),):
            raise ValueError(f"weights must have shape ({len(X)},); got {weights.shape}")
        rows, wts = [], []
        for d in np.flatnonzero(weights):
            r = X.index[d][forest_pairs(check_forest(H[d], int(X.n_mentions[d]), f"forest of document {d}"))]
            rows.append(r)
            wts.append(np.full(len(r), weights[d]))
        if not rows:
            return np.zeros(self.size_w)
        counts = np.bincount(np.concatenate(rows), weights=np.concatenate(wts), minlength=len(X.table))
        return counts @ X.table

    def joint_features(self, X, Y, H) -> np.ndarray:
        """``(n_docs, size_w)``: every document's ``phi(x, y, h) = sum of its forest's pair features``."""
        X = self._check_X(X)
        out = np.empty((len(X), self.size_w))
        for d, h in enumerate(self._checked_forests(X, H)):
            out[d] = X.table[X.index[d][forest_pairs(h)]].sum(axis=0)
        return out

    def planes(self, X, Y, docs, Ybar, Hbar):
        """``(ghat, b)`` of the n-slack cutting plane for documents ``docs`` and their loss-augmented answers
        ``(Ybar, Hbar)`` (one per listed document): ``ghat[k] = phi(x_d, ybar_k, hbar_k)`` and ``b[k] = Delta``
        as :meth:`loss` with ``H_pred`` gives it -- without re-validating the forests, which come from this
        model's own inference (tests compare with :meth:`joint_features` and :meth:`loss`)."""
        X = self._check_X(X)
        docs = np.asarray(docs, dtype=np.int64)
        if len(Ybar) != len(docs) or len(Hbar) != len(docs):
            raise ValueError("Ybar and Hbar must have one entry per listed document")
        ghat = np.empty((len(docs), self.size_w))
        b = np.empty(len(docs))
        golds = self._golds(X, Y)
        links = self._n_links(X, golds) if self.loss_kind == "mitre" else None
        sparse = X.sparse_rows() if self.backend == "cython" else None
        for k, d in enumerate(docs.tolist()):
            h = np.asarray(Hbar[k], dtype=np.int64)
            n = int(X.n_mentions[d])
            if h.shape != (n,):
                raise ValueError(f"forest of document {d} must have {n} entries; got shape {h.shape}")
            y = golds[d]
            if sparse is not None:   # the same sums, the same bits (coref_rows' docstring)
                n_edges, inside = _coref_rows.forest_feature_sum(*sparse, X.index[d], h, y, ghat[k])
            else:
                i, j = forest_edges(h)
                ghat[k] = X.table[X.index[d][pair_index(i, j, n)]].sum(axis=0)
                n_edges, inside = len(i), int(np.count_nonzero(y[i] == y[j]))
            if self.loss_kind == "mitre":
                L_ = links[d]
                b[k] = 100.0 * ((L_ - inside) + self.wrong_link_cost * (n_edges - inside)) / max(L_, 1)
            else:
                b[k] = L.canonical_pairwise_loss(y, fast_canonical(np.asarray(Ybar[k], dtype=np.int64)))
        return ghat, b

    def score(self, w, X, Y, H) -> np.ndarray:
        X, w = self._check_X(X), self._check_w(w)
        tw = self._scores(X, w)
        return np.array([tw[X.index[d][forest_pairs(h)]].sum() for d, h in enumerate(self._checked_forests(X, H))])

    # ----------------------------------------------------------------- losses
    def loss(self, Y_true, Y_pred, H_pred=None) -> np.ndarray:
        if len(Y_true) != len(Y_pred) or (H_pred is not None and len(H_pred) != len(Y_true)):
            raise ValueError("Y_true, Y_pred (and H_pred) must have one entry per document")
        out = np.empty(len(Y_true))
        for d, (y, yhat) in enumerate(zip(Y_true, Y_pred)):
            if H_pred is not None and self.loss_kind == "mitre":
                if not np.array_equal(forest_clustering(H_pred[d]), canonical_clustering(yhat)):
                    raise ValueError(f"document {d}: the forest's trees are not the predicted clusters")
                out[d] = L.mitre_forest_loss(y, H_pred[d], self.wrong_link_cost)
            elif self.loss_kind == "mitre":
                out[d] = L.mitre_link_loss(y, yhat, self.wrong_link_cost)
            else:
                out[d] = L.pairwise_loss(y, yhat)
        return out

    # ----------------------------------------------------------------- inference
    # Each document's pair scores are ``tw[X.index[d]]`` with ``tw = self._scores(X, w)``; the compiled kernels
    # read them through the index (no gather), the numpy backend gets them gathered.
    def _golds(self, X, Y) -> list:
        """Every document's gold clustering, checked and canonical (the kernels and the loss constants count
        clusters as max id + 1), as read-only copies.  Kept for the next call while ``Y`` holds the same
        numbers -- compared by content, so a ``Y`` refilled in place is checked again: the learners pass the
        same ``Y`` every pass, and checking it per document per pass cost 7 % of a run (issue 33)."""
        if len(Y) != len(X):
            raise ValueError(f"Y has {len(Y)} clusterings for {len(X)} documents")
        flat = None
        if all(isinstance(y, np.ndarray) and y.dtype.kind in "iu" and y.ndim == 1 for y in Y):
            flat = np.concatenate([y.astype(np.int64, copy=False) for y in Y]) if len(Y) else np.zeros(0, np.int64)
            lengths = tuple(len(y) for y in Y)
            cache = self.__dict__.get("_gold_cache")
            if cache is not None and cache[0] == lengths and np.array_equal(cache[1], flat):
                return cache[2]
        golds = []
        for d, (y, n) in enumerate(zip(Y, X.n_mentions)):
            g = np.array(fast_canonical(check_labels(y, int(n), f"clustering of document {d}")), dtype=np.int64)
            g.setflags(write=False)
            golds.append(g)
        if flat is not None:
            self._gold_cache = (lengths, flat.copy(), golds)
        return golds

    def _scores(self, X, w) -> np.ndarray:
        """``X.table @ w``: by the compiled kernel from the table's non-zero entries (the same bits as the dense
        kernel, :mod:`lvmrepro.engine._kernels.coref_rows`), or by NumPy (``backend="numpy"``)."""
        if self.backend == "numpy":
            return table_scores(X.table, w, "numpy")
        out = np.empty(len(X.table))
        _coref_rows.sparse_row_scores(*X.sparse_rows(), w, out)
        return out

    def _forest(self, tw, idx, n, *, allowed=None, gold=None, same=0.0, diff=0.0, threshold=0.0, buckets=None):
        """``(parent, total, clustering)``; the clustering is only computed when ``allowed`` is None.
        ``buckets`` (the document's :meth:`PairFeatures.by_row`): Kruskal over buckets instead of Prim
        (only without ``allowed``, with a finite threshold)."""
        if self.backend == "cython":
            if buckets is not None and allowed is None:
                scratch = self.__dict__.setdefault("_bucket_scratch", {})   # per document size, re-used
                if n not in scratch:
                    scratch[n] = bucket_scratch(n)
                out = bucket_kernel(tw, buckets, n, gold, same, diff, threshold, scratch=scratch[n])
                if out is not None:
                    return out
            return forest_kernel(tw, idx, n, allowed, gold, same, diff, threshold)
        h, total = max_spanning_forest(tw[idx], n, allowed=allowed, gold=gold, same_bonus=same, diff_bonus=diff,
                                       threshold=threshold, backend="numpy")
        return h, total, forest_clustering(h)

    def _complete(self, tw, idx, y):
        return self._forest(tw, idx, len(y), allowed=y, threshold=-np.inf)[:2]

    def _buckets(self, X, d, golds=None):
        """The document's buckets for the compiled bucket Kruskal (None: Prim); with ``golds`` (the list
        :meth:`_golds` returned) and the MITRE loss, in the split layout for its gold clustering, kept while
        ``X`` and ``golds`` stay the same objects (a loss-augmented pass then reads only the candidate pairs of
        each bucket's kind: the same forest, issue 33)."""
        if not (self.forest == "bucket" and self.backend == "cython"):
            return None
        if golds is None or self.loss_kind != "mitre":
            return X.by_row(d)
        cache = self._split(X, golds)
        if d not in cache[3]:
            cache[3][d] = split_buckets(X.by_row(d), golds[d])
        return cache[3][d]

    def _split(self, X, golds) -> tuple:
        """``(X, X.version, golds, split buckets by document, {"links": ..., "plans": ...})``: what the MITRE
        loss-augmented passes keep while ``X`` and ``golds`` stay the same objects (``golds``: :meth:`_golds`'
        read-only list, the same object only while ``Y`` holds the same numbers)."""
        cache = self.__dict__.get("_split_cache")
        if cache is None or cache[0] is not X or cache[1] != X.version or cache[2] is not golds:
            cache = self._split_cache = (X, X.version, golds, {}, {})
        return cache

    def _n_links(self, X, golds) -> list:
        """Every gold clustering's number of links ``n - clusters`` (the MITRE loss's ``L``), kept as :meth:`_split`."""
        kept = self._split(X, golds)[4]
        if "links" not in kept:
            kept["links"] = [len(y) - (int(y.max()) + 1 if len(y) else 0) for y in golds]
        return kept["links"]

    def _mitre_plans(self, X, golds) -> list:
        """Per document, what a MITRE loss-augmented pass by the compiled bucket Kruskal needs besides the scores:
        ``(head, tail, index, n, lam * n_links)`` with ``head`` the kernel's arguments before its outputs (split
        buckets, gold, the bonuses ``-lam`` and ``lam r``, threshold 0) and ``tail`` after them (scratch, candidate
        limit); ``None`` for a document without mentions.  Built once per ``(X, golds)`` (:meth:`_split`), with
        the numbers :meth:`_augmented` computes per call, so a pass is one kernel call per document (issue 33)."""
        kept = self._split(X, golds)[4]
        if "plans" not in kept:
            scratch = self.__dict__.setdefault("_bucket_scratch", {})
            plans = []
            for d, (idx, y, n_links) in enumerate(zip(X.index, golds, self._n_links(X, golds))):
                n = len(y)
                if n == 0:
                    plans.append(None)
                    continue
                lam = 100.0 / max(n_links, 1)     # as _augmented
                if n not in scratch:
                    scratch[n] = bucket_scratch(n)
                head = (*self._buckets(X, d, golds), y, -lam, lam * self.wrong_link_cost, 0.0)
                plans.append((head, (*scratch[n], int(BUCKET_MAX_FRACTION * n_pairs(n))), idx, n, lam * n_links))
            kept["plans"] = plans
        return kept["plans"]

    def _fast_mitre(self) -> bool:
        """Whether MITRE loss-augmented passes go through :meth:`_mitre_pass` (compiled bucket Kruskal)."""
        return self.loss_kind == "mitre" and self.forest == "bucket" and self.backend == "cython"

    def _mitre_pass(self, tw, X, golds):
        """``(Ybar, Hbar, aug)`` of a MITRE loss-augmented pass: per document what :meth:`_augmented` gives (the
        same kernel calls with the same arguments, Prim where the bucket kernel declines), without its per-call
        Python (the arguments are :meth:`_mitre_plans`')."""
        plans = self._mitre_plans(X, golds)
        Ybar, Hbar, aug = [], [], np.empty(len(plans))
        bucket_forest = _coref.bucket_forest
        for d, plan in enumerate(plans):
            if plan is None:
                ybar, hbar, aug[d] = self._augmented(tw, X.index[d], golds[d], None, self._buckets(X, d, golds))
            else:
                head, tail, idx, n, lam_links = plan
                hbar, ybar = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
                total = bucket_forest(tw, *head, hbar, ybar, *tail)
                if total != total:   # NaN: too many candidates, Prim on the complete graph (as _forest)
                    hbar, total, ybar = forest_kernel(tw, idx, n, None, *head[4:])
                aug[d] = total + lam_links
            Ybar.append(ybar)
            Hbar.append(hbar)
        return Ybar, Hbar, aug

    def _predict(self, tw, idx, n, bk=None):
        h, total, y = self._forest(tw, idx, n, buckets=bk)
        return y, h, total

    def _augmented(self, tw, idx, y, rank=None, bk=None):
        """``(ybar, hbar, aug)`` of one document (pair scores ``tw[idx]``, gold clustering ``y``;
        ``rank = value_rank(tw)``, needed by the pairwise greedy)."""
        n = len(y)
        n_links = n - (int(y.max()) + 1 if n else 0)
        if self.loss_kind == "mitre":
            lam = 100.0 / max(n_links, 1)     # L.mitre_scale(y) for a canonical y
            h, total, ybar = self._forest(tw, idx, n, gold=y, same=-lam, diff=lam * self.wrong_link_cost, buckets=bk)
            return ybar, h, total + lam * n_links
        lam = L.pairwise_scale(y)
        y_greedy, _ = greedy_kernel(tw, idx, rank, y, lam, self.greedy_passes, backend=self.backend)
        h_greedy, t_greedy = self._complete(tw, idx, y_greedy)
        h_gold, t_gold = self._complete(tw, idx, y)
        y_pred, h_pred, t_pred = self._predict(tw, idx, n, bk)
        candidates = [(t_greedy + L.canonical_pairwise_loss(y, y_greedy), y_greedy, h_greedy),
                      (t_gold, y, h_gold),
                      (t_pred + L.canonical_pairwise_loss(y, y_pred), y_pred, h_pred)]
        # the two ends of the clustering lattice: on full documents one cluster beat the greedy's answer in
        # most documents (merging A and B changes the loss by lam (|A||B| - 2 C(A, B)), which the greedy,
        # merging only on a positive gain from singletons, never reaches)
        for yc in (np.zeros(n, dtype=np.int64), np.arange(n, dtype=np.int64)):
            hc, tc = self._complete(tw, idx, yc)
            candidates.append((tc + L.canonical_pairwise_loss(y, yc), yc, hc))
        aug, ybar, hbar = max(candidates, key=lambda c: c[0])  # first of equals: the greedy's
        return ybar, hbar, aug

    def impute_latent(self, w, X, Y):
        X, w = self._check_X(X), self._check_w(w)
        golds = self._golds(X, Y)
        # CCCP completes at the w whose objective it has just evaluated (which completed there too): the last answer
        # is kept, keyed as the loss-augmented memo is (read-only forests, so a caller cannot change the kept ones)
        key, memo = (w.tobytes(), X, X.version, golds), self.__dict__.get("_impute_memo")
        if memo is not None and memo[0][0] == key[0] and memo[0][1] is X and memo[0][2] == key[2] \
                and memo[0][3] is golds:
            return list(memo[1][0]), memo[1][1].copy()
        tw = self._scores(X, w)
        H, best = [], np.empty(len(X))
        for d, (idx, y) in enumerate(zip(X.index, golds)):
            h, best[d] = self._complete(tw, idx, y)
            h.setflags(write=False)
            H.append(h)
        self._impute_memo = (key, (H, best.copy()))
        return list(H), best

    def loss_augmented_inference(self, w, X, Y):
        X, w = self._check_X(X), self._check_w(w)
        golds = self._golds(X, Y)
        # the learners ask again at the same w (SPL's K0 search asks once per trial K, and the selection and the
        # bound at every ACS step): the last answer is kept, keyed on what it depends on -- the bytes of w, X
        # as it is now (its arrays are read-only and assigning a field anew bumps its version) and the gold
        # clusterings (the same list object only while Y holds the same numbers: see _golds)
        memo = self.__dict__.get("_lai_memo")
        key = (w.tobytes(), X, X.version, golds)
        if memo is not None and memo[0][0] == key[0] and memo[0][1] is X and memo[0][2] == key[2] \
                and memo[0][3] is golds:
            Ybar, Hbar, aug = memo[1]
            return list(Ybar), list(Hbar), aug.copy()
        Ybar, Hbar, aug = self._loss_augmented_inference(w, X, golds)
        self._lai_memo = (key, (Ybar, Hbar, aug))
        return list(Ybar), list(Hbar), aug.copy()

    def _loss_augmented_inference(self, w, X, golds):
        tw = self._scores(X, w)
        if self._fast_mitre():
            return self._mitre_pass(tw, X, golds)
        rank = value_rank(tw) if self.loss_kind == "pairwise" else None
        Ybar, Hbar, aug = [], [], np.empty(len(X))
        for d, (idx, y) in enumerate(zip(X.index, golds)):
            ybar, hbar, aug[d] = self._augmented(tw, idx, y, rank, self._buckets(X, d, golds))
            Ybar.append(ybar)
            Hbar.append(hbar)
        return Ybar, Hbar, aug

    def trivial_margins(self, w, X, Y) -> tuple[np.ndarray, np.ndarray]:
        """Per document, the loss-augmented value of the oracle's answer minus that of "one cluster" and of
        "all singletons" (each scored exactly: its best forest plus the pairwise loss).  A negative entry is a
        document where a trivial clustering beats the oracle (issue 31); the oracle holds both as candidates,
        so every entry is >= 0 up to rounding."""
        if self.loss_kind != "pairwise":
            raise ValueError("trivial_margins is for the pairwise loss (the MITRE oracle is exact)")
        X, w = self._check_X(X), self._check_w(w)
        golds = self._golds(X, Y)
        _, _, aug = self.loss_augmented_inference(w, X, Y)
        tw = self._scores(X, w)
        one, single = np.empty(len(X)), np.empty(len(X))
        for d, (idx, y) in enumerate(zip(X.index, golds)):
            n = len(y)
            for yc, out in ((np.zeros(n, dtype=np.int64), one), (np.arange(n, dtype=np.int64), single)):
                out[d] = aug[d] - (self._complete(tw, idx, yc)[1] + L.canonical_pairwise_loss(y, yc))
        return one, single

    def predict(self, w, X):
        X, w = self._check_X(X), self._check_w(w)
        tw = self._scores(X, w)
        Y, H = [], []
        for d, (idx, n) in enumerate(zip(X.index, X.n_mentions)):
            y, h, _ = self._predict(tw, idx, int(n), self._buckets(X, d))
            Y.append(y)
            H.append(h)
        return Y, H

    def inference_terms(self, w, X, Y, H=None, complete: bool = True) -> InferenceTerms:
        """All objective terms from one pass (one product ``table @ w`` for everything); ``complete=False``
        skips the latent completion (``best``/``h_best`` are then ``None``), as the cutting plane asks."""
        X, w = self._check_X(X), self._check_w(w)
        tw = self._scores(X, w)
        rank = value_rank(tw) if self.loss_kind == "pairwise" else None
        golds = self._golds(X, Y)
        n_docs = len(X)
        fast = self._fast_mitre()
        if fast:
            ybar, hbar, aug = self._mitre_pass(tw, X, golds)
            terms = dict(ybar=ybar, hbar=hbar, aug=aug)
        else:
            terms = dict(ybar=[], hbar=[], aug=np.empty(n_docs))
        best, h_best = (np.empty(n_docs), []) if complete else (None, None)
        fixed = None if H is None else np.empty(n_docs)
        forests = None if H is None else self._checked_forests(X, H)
        for d, (idx, n, y) in enumerate(zip(X.index, X.n_mentions, golds) if not fast or complete or H is not None
                                        else ()):
            if not fast:
                ybar, hbar, terms["aug"][d] = self._augmented(tw, idx, y, rank, self._buckets(X, d, golds))
                terms["ybar"].append(ybar)
                terms["hbar"].append(hbar)
            if complete:
                hb, best[d] = self._complete(tw, idx, y)
                h_best.append(hb)
            if H is not None:
                fixed[d] = tw[idx[forest_pairs(forests[d])]].sum()
        # the same answers loss_augmented_inference gives at this w: kept in its memo, so the learner's objective at
        # the solver's returned w (often the last pass's w) does not repeat the pass
        self._lai_memo = ((w.tobytes(), X, X.version, golds),
                          (list(terms["ybar"]), list(terms["hbar"]), terms["aug"].copy()))
        return InferenceTerms(fixed=fixed, best=best, h_best=h_best, **terms)

    # ----------------------------------------------------------------- initial latent values
    def init_latent(self, X, Y, how: str = "chain", rng: np.random.Generator | None = None):
        """Initial forests: ``"chain"`` links every mention to the previous mention of its cluster (the
        MUC key's chain); ``"random"`` draws a uniform random spanning tree of every cluster (a uniform
        Pruefer sequence) from ``rng``."""
        X = self._check_X(X)
        Y = self.check_outputs(X, Y)
        if how not in INIT_RULES:
            raise ValueError(f"init rule must be one of {INIT_RULES}; got {how!r}")
        if how == "random" and not isinstance(rng, np.random.Generator):
            raise ValueError("init_latent(how='random') needs a numpy.random.Generator rng")
        return [chain_forest(y) if how == "chain" else random_spanning_forest(y, rng) for y in Y]
