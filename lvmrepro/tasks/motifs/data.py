"""The SPL motif-finding data: UniPROBE homeodomain PBM probes (Berger et al. 2008), as packaged by
Kumar, Packer & Koller (NIPS 2010, section 5.2) -- 5 proteins x 5 folds.

Files (registered as ``uniprobe/train<P>_<k>.data`` and, for protein 052 only,
``uniprobe/test052_<k>.data``): a first line ``N``, then ``N`` lines ``<name>:<label>:<flag>:<seq>``
with label ``1`` or ``-1``, a flag that is always ``0``, and a 60-nt probe: the 36-nt variable region
followed by the constant 24-nt primer :data:`PRIMER`.

Folds are five independent stratified 50/50 splits of each protein's probes (not a partition).  Only
protein 052 ships its test halves.  For the others :func:`load_fold` builds the test set at load
time as

    test_k = (train_1 u ... u train_5) - train_k,

which is disjoint from ``train_k`` by construction but smaller than the true test half: a probe of the
true ``test_k`` is in it only if some other fold trained on it (probability ``1 - 2**-4`` = 93.75 % for
independent halves), and about ``2**-5`` = 3.1 % of all probes are in no training fold at all.
:func:`test_set_facts` measures both numbers per protein and fold (exactly for 052).

Sequences are encoded as ``uint8`` codes 0..3 in :data:`ALPHABET` order (A, C, G, T).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from lvmrepro.datasets.registry import fetch

PROTEINS = ("052", "074", "108", "131", "146")
N_FOLDS = 5
PROTEINS_WITH_TEST = ("052",)
ALPHABET = "ACGT"
PROBE_LENGTH = 60
VARIABLE_LENGTH = 36
PRIMER = "GTCTGTGTTCCGTTGTCCGTGCTG"

# byte value -> code; 255 marks a byte outside ACGT
_CODE_OF_BYTE = np.full(256, 255, dtype=np.uint8)
for _code, _base in enumerate(ALPHABET):
    _CODE_OF_BYTE[ord(_base)] = _code


class ProbeFileError(ValueError):
    """A probe file is malformed; the message names the file and the line."""


@dataclass(frozen=True, eq=False)
class ProbeSet:
    """Encoded probes: ``codes`` (n, 60) uint8 in 0..3 and ``labels`` (n,) int64 in {+1, -1}.  Both
    arrays are read-only (they may be shared through the loader's cache)."""
    codes: np.ndarray
    labels: np.ndarray
    source: str

    def __post_init__(self):
        if self.codes.ndim != 2 or self.labels.shape != (self.codes.shape[0],):
            raise ValueError(f"{self.source}: codes {self.codes.shape} and labels {self.labels.shape} do not match")
        for arr in (self.codes, self.labels):
            arr.setflags(write=False)

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def n_positive(self) -> int:
        return int(np.count_nonzero(self.labels == 1))

    def sequences(self) -> list[str]:
        return decode(self.codes)


# --------------------------------------------------------------------------- encoding
def encode(sequences) -> np.ndarray:
    """``uint8`` codes (n, L) of equal-length ACGT strings (upper case)."""
    seqs = list(sequences)
    if not seqs:
        return np.zeros((0, PROBE_LENGTH), dtype=np.uint8)
    length = len(seqs[0])
    if any(len(s) != length for s in seqs):
        bad = next(i for i, s in enumerate(seqs) if len(s) != length)
        raise ValueError(f"sequence {bad} has length {len(seqs[bad])}; sequence 0 has {length}")
    raw = np.frombuffer("".join(seqs).encode("ascii", errors="replace"), dtype=np.uint8)
    codes = _CODE_OF_BYTE[raw].reshape(len(seqs), length)
    if np.any(codes == 255):
        i, j = np.argwhere(codes == 255)[0]
        raise ValueError(f"sequence {i} has {seqs[i][j]!r} at position {j}; only {ALPHABET} are allowed")
    return codes


def decode(codes) -> list[str]:
    """Inverse of :func:`encode`."""
    letters = np.frombuffer(ALPHABET.encode(), dtype=np.uint8)[np.asarray(codes, dtype=np.intp)]
    return [row.tobytes().decode("ascii") for row in np.atleast_2d(letters)]


# --------------------------------------------------------------------------- files
def parse_probe_text(text: str, source: str) -> ProbeSet:
    """Parse a probe file's text; ``source`` names it in every error message."""
    lines = text.splitlines()
    try:
        count = int(lines[0].strip())
    except (IndexError, ValueError):
        raise ProbeFileError(f"probe file {source}, line 1: expected the number of probes, got "
                             f"{lines[0][:40] if lines else ''!r}") from None
    body = [ln for ln in lines[1:] if ln.strip()]
    if len(body) != count:
        raise ProbeFileError(f"probe file {source}: line 1 announces {count} probes but the file has {len(body)}")
    labels = np.empty(count, dtype=np.int64)
    seqs = []
    for row, line in enumerate(body):
        fields = line.split(":")
        if len(fields) != 4 or fields[1] not in ("1", "-1"):
            raise ProbeFileError(f"probe file {source}, line {row + 2}: expected '<name>:<1|-1>:<flag>:<sequence>', "
                                 f"got {line[:80]!r}")
        labels[row] = int(fields[1])
        seqs.append(fields[3].strip())
    try:
        codes = encode(seqs)
    except ValueError as exc:
        raise ProbeFileError(f"probe file {source}: {exc}") from None
    if codes.shape[1] != PROBE_LENGTH:
        raise ProbeFileError(f"probe file {source}: probes have {codes.shape[1]} nt, expected {PROBE_LENGTH}")
    primer = encode([PRIMER])[0]
    off = np.flatnonzero(np.any(codes[:, VARIABLE_LENGTH:] != primer, axis=1))
    if off.size:
        raise ProbeFileError(f"probe file {source}, line {off[0] + 2}: the last {len(PRIMER)} nt are not the primer {PRIMER}")
    return ProbeSet(codes, labels, source)


def check_protein(protein) -> str:
    if protein not in PROTEINS:
        raise ValueError(f"unknown protein {protein!r}; the data have {PROTEINS}")
    return protein


def check_fold(fold) -> int:
    if isinstance(fold, bool) or not isinstance(fold, (int, np.integer)) or not 1 <= fold <= N_FOLDS:
        raise ValueError(f"fold must be an integer in 1..{N_FOLDS}; got {fold!r}")
    return int(fold)


def load_probe_file(protein: str, fold: int, part: str) -> ProbeSet:
    """One registered file, ``part`` = 'train' or 'test' (test files exist for 052 only).

    Every call goes through :func:`fetch` (checksum, provenance log); the parsed content is cached
    per verified file."""
    protein, fold = check_protein(protein), check_fold(fold)
    if part not in ("train", "test"):
        raise ValueError(f"part must be 'train' or 'test'; got {part!r}")
    if part == "test" and protein not in PROTEINS_WITH_TEST:
        raise ValueError(f"protein {protein} has no test files (only {PROTEINS_WITH_TEST} do); use load_fold, "
                         f"which builds its test set from the other folds")
    name = f"uniprobe/{part}{protein}_{fold}.data"
    path = Path(fetch(name))
    return _parse_file(name, str(path), path.stat().st_mtime_ns)


@lru_cache(maxsize=64)
def _parse_file(name: str, path: str, mtime_ns: int) -> ProbeSet:
    probes = parse_probe_text(Path(path).read_text(), name)
    if np.unique(probes.codes, axis=0).shape[0] != len(probes):
        raise ProbeFileError(f"probe file {name}: a probe is listed twice")
    return probes


# --------------------------------------------------------------------------- folds
@dataclass(frozen=True, eq=False)
class Fold:
    """A protein's fold: the training half, the test set, and how the test set was obtained
    (``"file"``: the shipped test half; ``"union-complement"``: union of the five training halves
    minus this one)."""
    protein: str
    fold: int
    train: ProbeSet
    test: ProbeSet
    test_kind: str


def _as_keys(codes: np.ndarray) -> np.ndarray:
    """One hashable ``bytes`` key per probe (its 60 codes)."""
    return np.array([row.tobytes() for row in codes], dtype=object)


def _training_union(protein: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every probe of the five training halves once, in order of first appearance (fold 1 first):
    ``(codes, labels, membership)`` with ``membership[r, k-1]`` = probe ``r`` is in ``train_k``.
    Raises if one probe carries two labels."""
    return _union_of(tuple(load_probe_file(protein, k, "train") for k in range(1, N_FOLDS + 1)), protein)


@lru_cache(maxsize=len(PROTEINS))
def _union_of(folds: tuple[ProbeSet, ...], protein: str):
    label_of: dict[bytes, int] = {}
    row_of: dict[bytes, int] = {}
    rows, member = [], []
    for k, probes in enumerate(folds, start=1):
        for key, code_row, y in zip(_as_keys(probes.codes), probes.codes, probes.labels):
            seen = label_of.setdefault(key, int(y))
            if seen != y:
                raise ProbeFileError(f"protein {protein}: probe {decode(code_row)[0]} is labelled {seen} in an earlier "
                                     f"training fold and {int(y)} in train{protein}_{k}")
            if key not in row_of:
                row_of[key] = len(rows)
                rows.append(code_row)
                member.append(np.zeros(N_FOLDS, dtype=bool))
            member[row_of[key]][k - 1] = True
    codes = np.array(rows, dtype=np.uint8)
    labels = np.array([label_of[r.tobytes()] for r in codes], dtype=np.int64)
    member = np.array(member)
    for arr in (codes, labels, member):
        arr.setflags(write=False)
    return codes, labels, member


def union_complement_test(protein: str, fold: int) -> ProbeSet:
    """``(union of the five training halves) - train_fold``, in order of first appearance."""
    protein, fold = check_protein(protein), check_fold(fold)
    codes, labels, member = _training_union(protein)
    keep = ~member[:, fold - 1]
    return ProbeSet(codes[keep], labels[keep], f"uniprobe/train{protein}_*.data minus fold {fold}")


def load_fold(protein: str, fold: int, *, test: str = "auto") -> Fold:
    """Training half and test set of ``protein`` (one of :data:`PROTEINS`), ``fold`` 1..5.

    ``test="auto"`` uses the shipped test half where there is one (052) and the union complement
    otherwise; ``test="union-complement"`` forces the construction (for 052 too, to measure it).
    """
    protein, fold = check_protein(protein), check_fold(fold)
    if test not in ("auto", "union-complement"):
        raise ValueError(f"test must be 'auto' or 'union-complement'; got {test!r}")
    train = load_probe_file(protein, fold, "train")
    if test == "auto" and protein in PROTEINS_WITH_TEST:
        return Fold(protein, fold, train, load_probe_file(protein, fold, "test"), "file")
    return Fold(protein, fold, train, union_complement_test(protein, fold), "union-complement")


def test_set_facts(protein: str) -> list[dict]:
    """Per fold: sizes of the training half, the constructed test set and (052) the true test half.

    Keys: ``protein, fold, train, union`` (distinct probes in the five training halves),
    ``constructed_test``; for 052 also ``true_test``, ``constructed_over_true`` (exact),
    ``total`` (train + true test) and ``in_no_fold`` (fraction of all probes in no training half);
    for the others ``constructed_over_train`` (the true test half has about as many probes as the
    training half, 50/50 splits) and ``in_no_fold_estimate`` = ``1 - union / (2 train)``.
    """
    protein = check_protein(protein)
    _, _, member = _training_union(protein)
    rows = []
    for k in range(1, N_FOLDS + 1):
        n_train = len(load_probe_file(protein, k, "train"))
        n_constructed = int(np.count_nonzero(~member[:, k - 1]))
        row = {"protein": protein, "fold": k, "train": n_train, "union": len(member),
               "constructed_test": n_constructed}
        if protein in PROTEINS_WITH_TEST:
            n_true = len(load_probe_file(protein, k, "test"))
            total = n_train + n_true
            row.update(true_test=n_true, constructed_over_true=n_constructed / n_true, total=total,
                       in_no_fold=(total - len(member)) / total)
        else:
            row.update(constructed_over_train=n_constructed / n_train,
                       in_no_fold_estimate=1.0 - len(member) / (2 * n_train))
        rows.append(row)
    return rows
