"""Binary mention-pair features for the latent coreference SSVM (after Ng & Cardie 2002).

For every pair of mentions ``i < j`` of a document (``i`` the earlier, candidate antecedent; ``j`` the
later, the anaphor) ``x_ij`` is a 0/1 vector of the :data:`FEATURES` below, computed only from the
tokens, the sentence split, the mention spans, the mention types (PROP/NOM/PRON) and the entity
classes.  The COP/APPOS annotations are never read here (they are gold links, see
:mod:`lvmrepro.tasks.coref.data`); nor is anything from the coreference chains.

There is no parser or part-of-speech tagger, so Ng & Cardie's syntactic features (binding, maximal NP,
subject/object role) and WordNet class are out; what is in is listed in :data:`FEATURES`, each with its
definition (the data page renders :func:`feature_table`).  The per-mention attributes the features
compare (head word, person/number/gender, quotation, determiner; their lexicons and heuristics) are
computed in :mod:`lvmrepro.tasks.coref.mentions`.

Storage: every feature is a bit, so a pair's vector packs into one ``uint64``; a
:class:`PairFeatures` keeps, per document, one small int index per pair into a table of the distinct
feature vectors of its documents (a few thousand rows).  A weight vector's pair scores are then
``(table @ w)[index]``: one small product and one gather, instead of a product over millions of rows.
Pairs are in the condensed order of :func:`scipy.spatial.distance.squareform`: ``(0,1), (0,2), ...,
(0,n-1), (1,2), ...``; :func:`pair_index` maps ``(i, j)`` to that position.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lvmrepro.engine._kernels import coref_rows_ref as _coref_rows_ref
from lvmrepro.tasks.coref.data import MENTION_TYPES, Document
from lvmrepro.tasks.coref.mentions import (  # noqa: F401  (mention_head and the attributes: read here before)
    MentionAttributes, mention_attributes, mention_head, quotation_ids,
)

SENTENCE_BINS = ((0, 0), (1, 1), (2, 2), (3, 4), (5, 9), (10, 19), (20, None))
MENTION_BINS = ((1, 1), (2, 2), (3, 4), (5, 9), (10, 19), (20, 49), (50, 99), (100, None))


def _bin_name(lo, hi):
    return f"{lo}+" if hi is None else (f"{lo}" if lo == hi else f"{lo}-{hi}")


# --------------------------------------------------------------------------- the feature list
FEATURES: tuple[tuple[str, str], ...] = (
    ("bias", "1 for every pair (a forest edge costs or earns this weight: a threshold on merging)"),
    *((f"types={a},{b}", f"the earlier mention is {a} and the later one {b}")
      for a in MENTION_TYPES for b in MENTION_TYPES),
    ("pron_str_match", "both pronouns, same lower-cased string (Ng & Cardie PRO_STR)"),
    ("name_str_match", "both proper names, same lower-cased string (PN_STR)"),
    ("nonpron_str_match", "both non-pronominal, same lower-cased string once leading articles and "
                          "demonstratives are removed (SOON_STR_NONPRO)"),
    ("head_match", "both non-pronominal, same lower-cased head word"),
    ("substring", "both non-pronominal, one's article-stripped word sequence is a proper contiguous part "
                  "of the other's (WORDS_STR, relaxed)"),
    ("alias", "both proper names, different strings, and the title-stripped name words of one are all "
              "among the other's (ALIAS: 'Mr. Holmes' / 'Holmes')"),
    ("word_overlap", "both non-pronominal and they share a content word (WORD_OVERLAP)"),
    ("ent_match", "same entity class (PER, FAC, GPE, LOC, ORG, VEH)"),
    ("number_agree", "both numbers known and equal (NUMBER)"),
    ("number_disagree", "both numbers known and different"),
    ("gender_agree", "both genders known and equal (GENDER)"),
    ("gender_disagree", "both genders known and different"),
    ("person_agree", "both persons known and equal (non-pronouns are third person)"),
    ("person_disagree", "both persons known and different"),
    ("reflexive_same_sentence", "the later mention is a reflexive pronoun in the same sentence"),
    ("nested", "one mention's span contains the other's (SPAN)"),
    ("later_definite", "the later mention starts with 'the' (DEFINITE_2)"),
    ("later_demonstrative", "the later mention starts with this/that/these/those (DEMONSTRATIVE_2)"),
    ("later_indefinite", "the later mention starts with a/an/another/some (INDEFINITE)"),
    ("closest_compatible", "the later mention is a pronoun and the earlier one is the closest preceding "
                           "mention agreeing with it in person, number and gender (unknown agrees)"),
    ("closest_head_match", "the later mention is non-pronominal and the earlier one is the closest "
                           "preceding non-pronominal mention with the same head"),
    *((f"sentence_distance={_bin_name(lo, hi)}", f"the mentions' sentences are {_bin_name(lo, hi)} apart")
      for lo, hi in SENTENCE_BINS),
    *((f"mention_distance={_bin_name(lo, hi)}", f"{_bin_name(lo, hi)} mentions apart (j - i)")
      for lo, hi in MENTION_BINS),
    ("quote=same", "both inside the same quotation"),
    ("quote=different", "both inside quotations, different ones"),
    ("quote=one", "exactly one of them inside a quotation"),
    ("quote=none", "both in narration (outside quotations)"),
    ("first_person_same_quote", "both first-person singular pronouns in the same quotation (same speaker)"),
    ("first_person_narration", "both first-person singular pronouns in narration (the narrator)"),
    ("second_person_same_quote", "both second-person pronouns in the same quotation (same addressee)"),
)
FEATURE_NAMES: tuple[str, ...] = tuple(name for name, _ in FEATURES)
N_FEATURES = len(FEATURES)
assert N_FEATURES <= 64, "features are packed into one uint64 per pair"
_COLUMN = {name: k for k, name in enumerate(FEATURE_NAMES)}


def feature_table() -> list[dict]:
    """``[{"index", "name", "definition"}, ...]`` for the data page."""
    return [{"index": k, "name": n, "definition": d} for k, (n, d) in enumerate(FEATURES)]


# --------------------------------------------------------------------------- pair indexing
def n_pairs(n: int) -> int:
    return n * (n - 1) // 2


def pair_index(i, j, n: int):
    """Condensed position of the pair ``(i, j)``, ``i < j`` (arrays broadcast); as scipy's squareform."""
    i = np.asarray(i, dtype=np.int64)
    j = np.asarray(j, dtype=np.int64)
    return n * i - i * (i + 1) // 2 + (j - i - 1)


# --------------------------------------------------------------------------- pair features
def _closest(mask: np.ndarray) -> np.ndarray:
    """``out[i, j]``: ``i`` is the largest index below ``j`` with ``mask[i, j]`` (upper triangle)."""
    n = mask.shape[0]
    m = np.triu(mask, 1)
    any_ = m.any(axis=0)
    last = n - 1 - np.argmax(m[::-1], axis=0)
    out = np.zeros_like(m)
    cols = np.flatnonzero(any_)
    out[last[cols], cols] = True
    return out


def _contiguous_part(short: list, long: list) -> bool:
    k = len(short)
    return 0 < k < len(long) and any(long[s:s + k] == short for s in range(len(long) - k + 1))


def pair_feature_matrix(doc: Document) -> np.ndarray:
    """Bool ``(n_pairs, N_FEATURES)``: the feature vector of every pair, in condensed pair order."""
    a = mention_attributes(doc)
    n = doc.n_mentions
    I, J = np.triu_indices(n, 1)
    F = np.zeros((len(I), N_FEATURES), dtype=bool)

    def put(name, values):
        F[:, _COLUMN[name]] = values

    pron = a.type_id == MENTION_TYPES.index("PRON")
    prop = a.type_id == MENTION_TYPES.index("PROP")
    both_pron, both_prop = pron[I] & pron[J], prop[I] & prop[J]
    both_nonpron = ~pron[I] & ~pron[J]
    put("bias", True)
    for ta in range(3):
        for tb in range(3):
            put(f"types={MENTION_TYPES[ta]},{MENTION_TYPES[tb]}", (a.type_id[I] == ta) & (a.type_id[J] == tb))
    same_string = a.string_id[I] == a.string_id[J]
    put("pron_str_match", both_pron & same_string)
    put("name_str_match", both_prop & same_string)
    put("nonpron_str_match", both_nonpron & (a.nodet_id[I] == a.nodet_id[J]))
    put("head_match", both_nonpron & (a.head_id[I] == a.head_id[J]))
    shared = (a.content @ a.content.T).toarray()
    put("word_overlap", both_nonpron & (shared[I, J] > 0))
    # substring: candidates whose content words are nested, then an exact contiguous check
    sizes = np.asarray(a.content.sum(axis=1)).ravel()
    nested_words = shared[I, J] == np.minimum(sizes[I], sizes[J])
    cand = np.flatnonzero(both_nonpron & nested_words & (a.nodet_id[I] != a.nodet_id[J]))
    sub = np.zeros(len(I), dtype=bool)
    for p in cand:
        x, y = a.nodet_tokens[I[p]], a.nodet_tokens[J[p]]
        sub[p] = _contiguous_part(x, y) or _contiguous_part(y, x)
    put("substring", sub)
    nshared = (a.name_words @ a.name_words.T).toarray()
    nsizes = np.asarray(a.name_words.sum(axis=1)).ravel()
    put("alias", both_prop & ~same_string & (np.minimum(nsizes[I], nsizes[J]) > 0)
        & (nshared[I, J] == np.minimum(nsizes[I], nsizes[J])))
    put("ent_match", a.ent_id[I] == a.ent_id[J])
    for name, attr in (("number", a.number), ("gender", a.gender), ("person", a.person)):
        known = (attr[I] > 0) & (attr[J] > 0)
        put(f"{name}_agree", known & (attr[I] == attr[J]))
        put(f"{name}_disagree", known & (attr[I] != attr[J]))
    same_sentence = a.sentence[I] == a.sentence[J]
    put("reflexive_same_sentence", a.reflexive[J] & same_sentence)
    put("nested", ((a.start[I] <= a.start[J]) & (a.end[J] <= a.end[I]))
        | ((a.start[J] <= a.start[I]) & (a.end[I] <= a.end[J])))
    put("later_definite", a.determiner[J] == 1)
    put("later_demonstrative", a.determiner[J] == 2)
    put("later_indefinite", a.determiner[J] == 3)

    def compatible(attr):
        return (attr[:, None] == attr[None, :]) | (attr[:, None] == 0) | (attr[None, :] == 0)

    agree = compatible(a.person) & compatible(a.number) & compatible(a.gender) & pron[None, :]
    put("closest_compatible", _closest(agree)[I, J])
    heads = (a.head_id[:, None] == a.head_id[None, :]) & ~pron[:, None] & ~pron[None, :]
    put("closest_head_match", _closest(heads)[I, J])
    for name, (lo, hi), dist in [*((f"sentence_distance={_bin_name(*b)}", b, a.sentence[J] - a.sentence[I])
                                   for b in SENTENCE_BINS),
                                 *((f"mention_distance={_bin_name(*b)}", b, J - I) for b in MENTION_BINS)]:
        put(name, (dist >= lo) & (True if hi is None else dist <= hi))
    qi, qj = a.quote[I], a.quote[J]
    same_quote = (qi >= 0) & (qi == qj)
    put("quote=same", same_quote)
    put("quote=different", (qi >= 0) & (qj >= 0) & (qi != qj))
    put("quote=one", (qi >= 0) ^ (qj >= 0))
    put("quote=none", (qi < 0) & (qj < 0))
    first_pair = a.first_singular[I] & a.first_singular[J]
    put("first_person_same_quote", first_pair & same_quote)
    put("first_person_narration", first_pair & (qi < 0) & (qj < 0))
    second = pron & (a.person == 2)
    put("second_person_same_quote", second[I] & second[J] & same_quote)
    return F


def pack_bits(F: np.ndarray) -> np.ndarray:
    """Pack a bool ``(m, k)`` matrix (``k <= 64``) into one uint64 per row (bit ``c`` = column ``c``)."""
    F = np.asarray(F, dtype=bool)
    if F.ndim != 2 or F.shape[1] > 64:
        raise ValueError(f"pack_bits needs a 2-D bool matrix with at most 64 columns; got shape {F.shape}")
    padded = np.zeros((F.shape[0], 64), dtype=bool)
    padded[:, :F.shape[1]] = F
    return np.packbits(padded, axis=1, bitorder="little").view("<u8").ravel().astype(np.uint64)


def unpack_bits(codes: np.ndarray, n_features: int = N_FEATURES) -> np.ndarray:
    """Inverse of :func:`pack_bits`: float64 ``(m, n_features)`` 0/1 rows."""
    shifts = np.arange(n_features, dtype=np.uint64)
    return ((codes[:, None] >> shifts[None, :]) & np.uint64(1)).astype(np.float64)


# --------------------------------------------------------------------------- the data set object
#: largest feature value accepted (the features are 0/1 indicators; with ``|w| <= 1e150`` scores stay finite)
MAX_TABLE_ENTRY = 1e100
#: most mentions in a document: its pairs, n (n - 1) / 2, then fit the kernels' int32 pair positions
MAX_MENTIONS = 65_536
_FIELDS = ("names", "n_mentions", "index", "table", "feature_names")


def _frozen(arr: np.ndarray) -> np.ndarray:
    """A read-only copy (the caches keyed on a PairFeatures -- its documents' buckets, a model's last
    answer -- stay valid because nothing can refill it in place)."""
    out = np.array(arr, copy=True, order="C")
    out.setflags(write=False)
    return out


@dataclass(eq=False)
class PairFeatures:
    """The input ``X`` of the coreference model: pair features of a list of documents.

    ``table`` (float64 ``(n_rows, n_features)``) holds the distinct 0/1 feature vectors; ``index[d]``
    (int32, one entry per pair of document ``d`` in condensed order) points into it, so
    ``x_ij = table[index[d][pair_index(i, j, n_mentions[d])]]``.

    The arrays are kept as read-only copies (``index`` as a tuple of them): writing into them raises
    numpy's ``ValueError: assignment destination is read-only``, and assigning a field anew (``X.table =
    ...``) validates the whole object again, so the kernels never see an index outside the table.
    """
    names: tuple[str, ...]
    n_mentions: np.ndarray
    index: tuple
    table: np.ndarray
    feature_names: tuple[str, ...] = FEATURE_NAMES

    def __post_init__(self):
        fields = _validated(self.names, self.n_mentions, self.index, self.table, self.feature_names)
        for name, value in zip(_FIELDS, fields):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_version", 0)
        object.__setattr__(self, "_ready", True)

    def __setattr__(self, name, value):
        if not self.__dict__.get("_ready") or name not in _FIELDS:
            object.__setattr__(self, name, value)
            return
        current = {f: self.__dict__[f] for f in _FIELDS}
        current[name] = value
        fields = _validated(*(current[f] for f in _FIELDS))
        for f, v in zip(_FIELDS, fields):
            object.__setattr__(self, f, v)
        self.__dict__.pop("_by_row", None)
        self.__dict__.pop("_sparse_rows", None)
        object.__setattr__(self, "_version", self._version + 1)

    @property
    def version(self) -> int:
        """How many times a field was assigned anew (0 as built): callers keying a cache on this object use it."""
        return self._version

    @classmethod
    def _trusted(cls, names, n_mentions, index, table, feature_names) -> "PairFeatures":
        """A PairFeatures of parts of an already validated one (read-only arrays shared, not copied)."""
        X = object.__new__(cls)
        for name, value in zip(_FIELDS, (tuple(names), n_mentions, tuple(index), table, tuple(feature_names))):
            object.__setattr__(X, name, value)
        object.__setattr__(X, "_version", 0)
        object.__setattr__(X, "_ready", True)
        return X

    def __len__(self) -> int:
        return len(self.index)

    @property
    def n_features(self) -> int:
        return self.table.shape[1]

    def by_row(self, d: int):
        """``(row_ids, row_ptr, pi, pj)`` of document ``d``: its pairs grouped by feature row (ascending
        rows, condensed order inside a row), for the bucket kernels (:func:`lvmrepro.engine._kernels.coref.
        bucket_forest`); computed once per document and kept."""
        cache = self.__dict__.setdefault("_by_row", {})
        if d not in cache:
            idx = self.index[d]
            order = np.argsort(idx, kind="stable")
            rows = idx[order]
            row_ids, starts = np.unique(rows, return_index=True)
            n = int(self.n_mentions[d])
            i, j = np.triu_indices(n, 1)
            cache[d] = (np.ascontiguousarray(row_ids, dtype=np.int32),
                        np.ascontiguousarray(np.append(starts, len(rows)), dtype=np.int64),
                        np.ascontiguousarray(i[order], dtype=np.int32), np.ascontiguousarray(j[order], dtype=np.int32))
        return cache[d]

    def sparse_rows(self):
        """``(row_ptr, cols, vals)``: the table's non-zero entries by row (read-only; computed once and kept),
        for :func:`lvmrepro.engine._kernels.coref_rows.sparse_row_scores`."""
        if "_sparse_rows" not in self.__dict__:
            parts = _coref_rows_ref.sparse_rows(self.table)
            for a in parts:
                a.setflags(write=False)
            object.__setattr__(self, "_sparse_rows", parts)
        return self._sparse_rows

    def dense(self, d: int) -> np.ndarray:
        """Float64 ``(n_pairs, n_features)`` matrix of document ``d`` (tests, small documents)."""
        return self.table[self.index[d]]

    def pair_scores(self, w, d: int) -> np.ndarray:
        """``w . x_ij`` for every pair of document ``d`` (condensed order)."""
        return (self.table @ w)[self.index[d]]

    def subset(self, docs) -> "PairFeatures":
        """The documents ``docs`` (indices), sharing this object's table."""
        docs = [int(d) for d in np.asarray(docs, dtype=np.int64).ravel()]
        for d in docs:
            if not 0 <= d < len(self):
                raise ValueError(f"document index {d} is outside 0..{len(self) - 1}")
        n_mentions = _frozen(self.n_mentions[docs])
        return PairFeatures._trusted(tuple(self.names[d] for d in docs), n_mentions, [self.index[d] for d in docs],
                                     self.table, self.feature_names)


def _validated(names, n_mentions, index, table, feature_names):
    """The fields of a PairFeatures, checked (one-line ValueError naming the problem) and made read-only."""
    table = np.asarray(table)
    if table.ndim != 2 or table.dtype.kind not in "biuf":
        raise ValueError(f"the feature table must be a 2-D array of numbers; got {table.dtype} of shape {table.shape}")
    table = _frozen(table.astype(np.float64, copy=False))
    if not np.all(np.isfinite(table)):
        raise ValueError("the feature table has NaN or infinite entries")
    if table.size and float(np.abs(table).max()) > MAX_TABLE_ENTRY:
        raise ValueError(f"the feature table has entries above {MAX_TABLE_ENTRY:g} in magnitude: pair scores "
                         f"would overflow (the features are indicators)")
    if len(table) > np.iinfo(np.int32).max:
        raise ValueError("the feature table has more rows than an int32 pair index can address")
    names = tuple(names)
    feature_names = tuple(feature_names)
    nm = np.asarray(n_mentions)
    if nm.ndim != 1 or (nm.size and nm.dtype.kind not in "iu"):
        raise ValueError(f"n_mentions must be a 1-D integer array; got {nm.dtype} of shape {nm.shape}")
    n_mentions = _frozen(nm.astype(np.int64))
    if isinstance(index, np.ndarray) or not hasattr(index, "__len__"):
        raise ValueError("index must be a list with one int32 pair-index array per document")
    if not (len(names) == len(index) == len(n_mentions)):
        raise ValueError("names, n_mentions and index must have one entry per document")
    rows = len(table)
    checked = []
    for d, (idx, n) in enumerate(zip(index, n_mentions)):
        if not 1 <= n <= MAX_MENTIONS:
            raise ValueError(f"document {names[d]} has {n} mentions; a document has 1 to {MAX_MENTIONS:,}")
        if not isinstance(idx, np.ndarray) or idx.dtype != np.int32 or idx.shape != (n_pairs(int(n)),):
            raise ValueError(f"document {names[d]}: the pair index must be an int32 array of {n_pairs(int(n))} entries")
        if idx.size and (idx.min() < 0 or idx.max() >= rows):
            raise ValueError(f"document {names[d]}: the pair index points outside the table")
        checked.append(_frozen(idx))
    return names, n_mentions, tuple(checked), table, feature_names


def restrict_document(X: PairFeatures, d: int, mentions) -> PairFeatures:
    """A one-document :class:`PairFeatures` of mentions ``mentions`` (ascending) of document ``d``, with the
    same pair features (those of the full document: distances, 'closest' flags... keep their values)."""
    mentions = np.asarray(mentions, dtype=np.int64)
    n = int(X.n_mentions[d])
    if mentions.ndim != 1 or mentions.size < 1 or np.any(np.diff(mentions) <= 0) or mentions[0] < 0 \
            or mentions[-1] >= n:
        raise ValueError(f"mentions must be increasing indices in 0..{n - 1}")
    i, j = np.triu_indices(len(mentions), 1)
    index = np.ascontiguousarray(X.index[d][pair_index(mentions[i], mentions[j], n)], dtype=np.int32)
    return PairFeatures(names=(f"{X.names[d]}[{mentions[0]}..{mentions[-1]}]",),
                        n_mentions=np.array([len(mentions)]), index=[index], table=X.table,
                        feature_names=X.feature_names)


def build_pair_features(docs, feature_matrices=None) -> PairFeatures:
    """:class:`PairFeatures` of parsed documents (``feature_matrices`` to pass precomputed bool ones)."""
    docs = list(docs)
    if not docs:
        raise ValueError("build_pair_features needs at least one document")
    mats = [pair_feature_matrix(d) for d in docs] if feature_matrices is None else list(feature_matrices)
    for d, F in zip(docs, mats):
        if F.shape != (d.n_pairs, N_FEATURES):
            raise ValueError(f"document {d.name}: feature matrix of shape {F.shape}, expected "
                             f"{(d.n_pairs, N_FEATURES)}")
    packed = [pack_bits(F) for F in mats]
    uniq, inverse = np.unique(np.concatenate(packed), return_inverse=True)
    bounds = np.cumsum([0] + [len(p) for p in packed])
    index = [np.ascontiguousarray(inverse[bounds[k]:bounds[k + 1]], dtype=np.int32) for k in range(len(docs))]
    return PairFeatures(names=tuple(d.name for d in docs),
                        n_mentions=np.array([d.n_mentions for d in docs], dtype=np.int64),
                        index=index, table=unpack_bits(uniq))
