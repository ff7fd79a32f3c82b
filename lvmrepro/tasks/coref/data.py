"""LitBank coreference (Bamman, Lewke & Mansoor, LREC 2020): the stand-in for MUC-6 in SPL Figure 1.

100 literary documents (about 2,000 words each), read through the checksummed registry as pairs
``litbank-coref/tsv/<doc>.txt`` + ``<doc>.ann``:

* ``.txt``: one tokenised sentence per line, tokens separated by single spaces;
* ``.ann``: tab-separated rows

  - ``MENTION <id> <sent> <start> <sent> <end> <text> <ENT> <TYPE>``: a gold mention, token ``start``
    to ``end`` *inclusive* of sentence ``sent`` (0-based), entity class ``ENT`` in PER/FAC/GPE/LOC/
    ORG/VEH, mention type ``TYPE`` in PROP (name) / NOM (nominal) / PRON (pronoun);
  - ``COREF <id> <entity>``: mention ``id`` belongs to the chain named ``entity``;
  - ``COP <a> <b>`` / ``APPOS <a> <b>``: ``a`` is a predicate nominal (copula) or an appositive of ``b``.

Attributive mentions
--------------------
LitBank follows OntoNotes in *not* putting predicate nominals and appositives into chains: the first
argument of a COP/APPOS row has no COREF row (692 mentions: exactly one per COP/APPOS row).  MUC-6,
which the paper used, does link them (its IDENT relation covers appositives and predicate nominals).
``attributive`` chooses:

* ``"link"`` (default, MUC-6 style): such a mention joins the chain of the mention it is attached to,
  following COP/APPOS rows until a mention with a chain is reached (a group with no chain at all
  becomes its own cluster);
* ``"drop"`` (LitBank/OntoNotes style): such mentions are removed;
* ``"singleton"``: they stay as clusters of one.

The COP/APPOS rows are gold *links*: they only decide clusters here and never reach a feature
(:mod:`lvmrepro.tasks.coref.features` sees tokens, spans, mention types and entity classes only).

Mentions are ordered by (sentence, start, end, file order); clusterings are int arrays with cluster ids
numbered by first mention (see :func:`canonical_clustering`).  :func:`split_documents` draws the
seeded 50/50 document split.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from lvmrepro.datasets.registry import default_registry, fetch

PREFIX = "litbank-coref/tsv/"
ENTITY_CLASSES = ("PER", "FAC", "GPE", "LOC", "ORG", "VEH")
MENTION_TYPES = ("PROP", "NOM", "PRON")
ATTRIBUTIVE_POLICIES = ("link", "drop", "singleton")
N_DOCUMENTS = 100


class AnnotationError(ValueError):
    """A ``.ann`` or ``.txt`` file is malformed; the message names the file and the line."""


@dataclass(frozen=True)
class Mention:
    """One gold mention: tokens ``start..end`` (inclusive) of sentence ``sentence``."""
    ann_id: str
    sentence: int
    start: int
    end: int
    text: str
    entity_class: str
    mention_type: str

    @property
    def n_tokens(self) -> int:
        return self.end - self.start + 1


@dataclass
class Document:
    """A parsed document: sentences of tokens, mentions in document order, the gold clustering.

    ``clusters[k]`` is the cluster id of ``mentions[k]`` (canonical: ids numbered by first mention);
    ``links`` keeps the COP/APPOS rows as ``(kind, mention index a, mention index b)`` among the kept
    mentions (gold links, never features); ``entity_names[c]`` is the chain name of cluster ``c``
    (``None`` for a cluster made of attributive mentions only).
    """
    name: str
    sentences: list[list[str]]
    mentions: tuple[Mention, ...]
    clusters: np.ndarray
    entity_names: list = field(default_factory=list)
    links: list = field(default_factory=list)

    @property
    def n_mentions(self) -> int:
        return len(self.mentions)

    @property
    def n_pairs(self) -> int:
        return self.n_mentions * (self.n_mentions - 1) // 2

    @property
    def n_clusters(self) -> int:
        return int(self.clusters.max()) + 1 if len(self.clusters) else 0

    def sentence_offsets(self) -> np.ndarray:
        """Index of each sentence's first token in the document's token sequence (plus the total)."""
        return np.concatenate([[0], np.cumsum([len(s) for s in self.sentences])]).astype(np.int64)


# --------------------------------------------------------------------------- canonical clusterings
def canonical_clustering(labels) -> np.ndarray:
    """Relabel a clustering so that cluster ids are 0, 1, 2, ... in order of first mention.

    Two clusterings are the same partition iff their canonical forms are equal arrays.
    """
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"a clustering must be a 1-D array of cluster ids; got shape {labels.shape}")
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inverse.ravel()]


# --------------------------------------------------------------------------- parsing
def parse_sentences(text: str, source: str) -> list[list[str]]:
    """Sentences of a ``.txt`` file: one per line, tokens separated by single spaces."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    sentences = []
    for lineno, line in enumerate(lines, 1):
        tokens = line.split(" ")
        if not line or any(t == "" for t in tokens):
            raise AnnotationError(f"text file {source}, line {lineno}: empty sentence or empty token")
        sentences.append(tokens)
    if not sentences:
        raise AnnotationError(f"text file {source}: no sentences")
    return sentences


def _parse_rows(text: str, source: str, sentences):
    mentions, chains, links = {}, {}, []
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        f = line.split("\t")
        where = f"annotation file {source}, line {lineno}"
        kind = f[0]
        if kind == "MENTION":
            if len(f) != 9:
                raise AnnotationError(f"{where}: a MENTION row has 9 tab-separated fields, got {len(f)}")
            ann_id, text_ = f[1], f[6]
            try:
                s1, a, s2, b = (int(v) for v in f[2:6])
            except ValueError:
                raise AnnotationError(f"{where}: sentence and token positions must be integers: {f[2:6]}") from None
            if s1 != s2:
                raise AnnotationError(f"{where}: mention {ann_id} spans sentences {s1} and {s2}")
            if not 0 <= s1 < len(sentences) or not 0 <= a <= b < len(sentences[s1]):
                raise AnnotationError(f"{where}: mention {ann_id} span {s1}:{a}-{b} is outside the text")
            if " ".join(sentences[s1][a:b + 1]) != text_:
                raise AnnotationError(f"{where}: mention {ann_id} text {text_!r} differs from the tokens "
                                      f"{' '.join(sentences[s1][a:b + 1])!r}")
            if f[7] not in ENTITY_CLASSES:
                raise AnnotationError(f"{where}: entity class {f[7]!r} is not one of {ENTITY_CLASSES}")
            if f[8] not in MENTION_TYPES:
                raise AnnotationError(f"{where}: mention type {f[8]!r} is not one of {MENTION_TYPES}")
            if ann_id in mentions:
                raise AnnotationError(f"{where}: mention id {ann_id} appears twice")
            mentions[ann_id] = (lineno, Mention(ann_id, s1, a, b, text_, f[7], f[8]))
        elif kind == "COREF":
            if len(f) != 3:
                raise AnnotationError(f"{where}: a COREF row has 3 tab-separated fields, got {len(f)}")
            if f[1] in chains:
                raise AnnotationError(f"{where}: mention {f[1]} is in two chains")
            chains[f[1]] = (lineno, f[2])
        elif kind in ("COP", "APPOS"):
            if len(f) != 3:
                raise AnnotationError(f"{where}: a {kind} row has 3 tab-separated fields, got {len(f)}")
            links.append((lineno, kind, f[1], f[2]))
        else:
            raise AnnotationError(f"{where}: unknown row kind {kind!r} (expected MENTION, COREF, COP, APPOS)")
    for ann_id, (lineno, _) in chains.items():
        if ann_id not in mentions:
            raise AnnotationError(f"annotation file {source}, line {lineno}: COREF names unknown mention {ann_id}")
    for lineno, kind, a, b in links:
        for m in (a, b):
            if m not in mentions:
                raise AnnotationError(f"annotation file {source}, line {lineno}: {kind} names unknown mention {m}")
    return mentions, chains, links


def _attach_attributive(ids, chains, links, policy):
    """Chain name per mention id (``None``: no chain) and the ids kept, after the attributive policy."""
    chain_of = {m: chains[m][1] for m in ids if m in chains}
    if policy == "drop":
        return chain_of, [m for m in ids if m in chains]
    if policy == "singleton":
        return chain_of, list(ids)
    # "link": union the COP/APPOS groups; a group takes the (unique) chain its members carry.
    parent = {m: m for m in ids}

    def find(m):
        while parent[m] != m:
            parent[m] = parent[parent[m]]
            m = parent[m]
        return m

    for _, _, a, b in links:
        parent[find(a)] = find(b)
    group_chain = {}
    for m, name in chain_of.items():
        group_chain.setdefault(find(m), name)
    linked = dict(chain_of)
    for m in ids:
        if m not in linked and find(m) in group_chain:
            linked[m] = group_chain[find(m)]
    return linked, list(ids)


def parse_document(name: str, txt: str, ann: str, *, attributive: str = "link") -> Document:
    """Parse one document from the texts of its ``.txt`` and ``.ann`` files."""
    if attributive not in ATTRIBUTIVE_POLICIES:
        raise ValueError(f"attributive must be one of {ATTRIBUTIVE_POLICIES}; got {attributive!r}")
    sentences = parse_sentences(txt, f"{name}.txt")
    raw, chains, raw_links = _parse_rows(ann, f"{name}.ann", sentences)
    order = sorted(raw, key=lambda m: (raw[m][1].sentence, raw[m][1].start, raw[m][1].end, raw[m][0]))
    chain_of, kept = _attach_attributive(order, chains, raw_links, attributive)
    kept_set = set(kept)
    kept = [m for m in order if m in kept_set]
    # cluster key: the chain name, or the mention itself (a fresh singleton / chain-less group)
    keys, entity_names = [], []
    for m in kept:
        keys.append(("chain", chain_of[m]) if m in chain_of else ("alone", m))
    if attributive == "link":  # chain-less COP/APPOS groups become one cluster each
        ids = {m: k for k, m in enumerate(order)}
        keys = [k if k[0] == "chain" else ("group", _group_root(m, raw_links, ids)) for m, k in zip(kept, keys)]
    uniq = {}
    labels = np.array([uniq.setdefault(k, len(uniq)) for k in keys], dtype=np.int64)
    clusters = canonical_clustering(labels)
    entity_names = [None] * (int(clusters.max()) + 1 if len(clusters) else 0)
    for k, c in zip(keys, clusters):
        entity_names[c] = k[1] if k[0] == "chain" else None
    index = {m: k for k, m in enumerate(kept)}
    links = [(kind, index[a], index[b]) for _, kind, a, b in raw_links if a in index and b in index]
    return Document(name=name, sentences=sentences, mentions=tuple(raw[m][1] for m in kept),
                    clusters=clusters, entity_names=entity_names, links=links)


def _group_root(m, links, order_index):
    """The earliest mention of ``m``'s COP/APPOS group (a stable name for a chain-less group)."""
    adj = {}
    for _, _, a, b in links:
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)
    seen, stack = {m}, [m]
    while stack:
        for v in adj.get(stack.pop(), ()):
            if v not in seen:
                seen.add(v)
                stack.append(v)
    return min(seen, key=order_index.__getitem__)


# --------------------------------------------------------------------------- the corpus
@lru_cache(maxsize=1)
def document_names() -> tuple[str, ...]:
    """The 100 document names (file stems) in the registry, sorted."""
    names = default_registry().names(PREFIX)
    stems = sorted({n[len(PREFIX):-4] for n in names if n.endswith(".ann")})
    missing = [s for s in stems if PREFIX + s + ".txt" not in default_registry()]
    if missing:
        raise ValueError(f"litbank documents without a registered .txt: {missing[:3]}")
    return tuple(stems)


def _check_name(name) -> str:
    if not isinstance(name, str) or name not in document_names():
        raise ValueError(f"unknown litbank document {name!r}; document_names() lists the {N_DOCUMENTS}")
    return name


def load_document(name: str, *, attributive: str = "link") -> Document:
    """Parse document ``name`` (a stem from :func:`document_names`) through the registry."""
    _check_name(name)
    if attributive not in ATTRIBUTIVE_POLICIES:
        raise ValueError(f"attributive must be one of {ATTRIBUTIVE_POLICIES}; got {attributive!r}")
    txt = Path(fetch(PREFIX + name + ".txt")).read_text(encoding="utf-8")
    ann = Path(fetch(PREFIX + name + ".ann")).read_text(encoding="utf-8")
    return parse_document(name, txt, ann, attributive=attributive)


def load_documents(names=None, *, attributive: str = "link") -> list[Document]:
    """Parse several documents (all 100 when ``names`` is None), in the order given."""
    names = document_names() if names is None else list(names)
    for n in names:
        _check_name(n)
    return [load_document(n, attributive=attributive) for n in names]


def split_documents(seed: int, n_train: int = 50) -> tuple[list[str], list[str]]:
    """A seeded train/test split of the 100 documents: ``(train names, test names)``, each sorted.

    The paper split MUC-6's 60 documents 30/30; here it is ``n_train``/``100 - n_train`` (default 50/50),
    drawn by a permutation from ``numpy.random.default_rng(seed)``.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer; got {seed!r}")
    names = document_names()
    if isinstance(n_train, bool) or not isinstance(n_train, (int, np.integer)) or not 1 <= n_train < len(names):
        raise ValueError(f"n_train must be an integer in 1..{len(names) - 1}; got {n_train!r}")
    perm = np.random.default_rng(int(seed)).permutation(len(names))
    train = sorted(names[k] for k in perm[:n_train])
    test = sorted(names[k] for k in perm[n_train:])
    return train, test
