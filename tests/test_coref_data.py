"""LitBank loader, the seeded split, and the pair features."""
import numpy as np
import pytest

from conftest import needs_data
from lvmrepro.tasks.coref import features as cf
from lvmrepro.tasks.coref import data as lb

TXT = "“ I saw Mr. Holmes , ” said she .\nHolmes was a detective , the man .\nHe smiled at himself .\n"
ANN = "\t".join
ROWS = [
    ["MENTION", "T1", "0", "1", "0", "1", "I", "PER", "PRON"],
    ["MENTION", "T2", "0", "3", "0", "4", "Mr. Holmes", "PER", "PROP"],
    ["MENTION", "T3", "0", "8", "0", "8", "she", "PER", "PRON"],
    ["MENTION", "T4", "1", "0", "1", "0", "Holmes", "PER", "PROP"],
    ["MENTION", "T5", "1", "2", "1", "3", "a detective", "PER", "NOM"],
    ["MENTION", "T6", "1", "5", "1", "6", "the man", "PER", "NOM"],
    ["MENTION", "T7", "2", "0", "2", "0", "He", "PER", "PRON"],
    ["MENTION", "T8", "2", "3", "2", "3", "himself", "PER", "PRON"],
    ["COREF", "T1", "narrator-0"],
    ["COREF", "T3", "narrator-0"],
    ["COREF", "T2", "Holmes-1"],
    ["COREF", "T4", "Holmes-1"],
    ["COREF", "T7", "Holmes-1"],
    ["COREF", "T8", "Holmes-1"],
    ["COREF", "T6", "man-2"],
    ["COP", "T5", "T4"],
]
ANN_TEXT = "\n".join(ANN(r) for r in ROWS) + "\n"


def doc(policy="link", ann=ANN_TEXT):
    return lb.parse_document("toy", TXT, ann, attributive=policy)


def test_parse_toy_document():
    d = doc()
    assert [m.text for m in d.mentions] == ["I", "Mr. Holmes", "she", "Holmes", "a detective", "the man", "He",
                                            "himself"]
    # clusters numbered by first mention; the predicate nominal joins Holmes (MUC-6 style)
    np.testing.assert_array_equal(d.clusters, [0, 1, 0, 1, 1, 2, 1, 1])
    assert d.links == [("COP", 4, 3)]
    assert d.entity_names == ["narrator-0", "Holmes-1", "man-2"]


def test_attributive_policies():
    np.testing.assert_array_equal(doc("singleton").clusters, [0, 1, 0, 1, 2, 3, 1, 1])
    dropped = doc("drop")
    assert "a detective" not in [m.text for m in dropped.mentions] and dropped.links == []
    with pytest.raises(ValueError, match="attributive"):
        doc("merge")


@pytest.mark.parametrize("row, message", [
    ("MENTION\tT9\t0\t1\t0\t1\tI\tPER", "9 tab-separated"),
    ("MENTION\tT9\t0\t1\t1\t1\tI\tPER\tPRON", "spans sentences"),
    ("MENTION\tT9\t0\t1\t0\t40\tI\tPER\tPRON", "outside the text"),
    ("MENTION\tT9\t0\t1\t0\t1\tyou\tPER\tPRON", "differs from the tokens"),
    ("MENTION\tT9\t0\t1\t0\t1\tI\tANIMAL\tPRON", "entity class"),
    ("MENTION\tT9\t0\t1\t0\t1\tI\tPER\tDET", "mention type"),
    ("MENTION\tT1\t0\t1\t0\t1\tI\tPER\tPRON", "appears twice"),
    ("MENTION\tT9\t0\tx\t0\t1\tI\tPER\tPRON", "integers"),
    ("COREF\tT99\tx-1", "unknown mention"),
    ("COREF\tT1\tother-5", "two chains"),
    ("APPOS\tT1\tT99", "unknown mention"),
    ("BRIDGE\tT1\tT2", "unknown row kind"),
])
def test_bad_annotation_rows_name_file_and_line(row, message):
    with pytest.raises(lb.AnnotationError, match=message) as err:
        doc(ann=ANN_TEXT + row + "\n")
    assert "toy.ann" in str(err.value)


def test_bad_text_file():
    with pytest.raises(lb.AnnotationError, match="toy.txt, line 2"):
        lb.parse_document("toy", "a b\n\nc\n", "", attributive="link")


def test_canonical_clustering():
    np.testing.assert_array_equal(lb.canonical_clustering([7, 3, 7, 9, 3]), [0, 1, 0, 2, 1])
    with pytest.raises(ValueError, match="1-D"):
        lb.canonical_clustering(np.zeros((2, 2)))


def test_split_is_a_function_of_the_seed(monkeypatch):
    monkeypatch.setattr(lb, "document_names", lambda: tuple(f"d{k:03d}" for k in range(100)))
    a, b = lb.split_documents(3), lb.split_documents(3)
    assert a == b and len(a[0]) == len(a[1]) == 50 and not set(a[0]) & set(a[1])
    assert lb.split_documents(4) != a
    assert len(lb.split_documents(3, n_train=30)[0]) == 30
    for bad in (-1, 1.5, "1", True):
        with pytest.raises(ValueError, match="seed"):
            lb.split_documents(bad)
    with pytest.raises(ValueError, match="n_train"):
        lb.split_documents(0, n_train=100)


# --------------------------------------------------------------------------- features
def feature(F, d, i, j, name):
    return bool(F[cf.pair_index(i, j, d.n_mentions), cf.FEATURE_NAMES.index(name)])


def test_toy_features_by_hand():
    d = doc()
    F = cf.pair_feature_matrix(d)
    assert F.shape == (d.n_pairs, cf.N_FEATURES) and F[:, 0].all()
    assert feature(F, d, 1, 3, "alias") and not feature(F, d, 1, 3, "name_str_match")   # Mr. Holmes / Holmes
    assert feature(F, d, 1, 3, "head_match") and feature(F, d, 1, 3, "types=PROP,PROP")
    assert feature(F, d, 6, 7, "reflexive_same_sentence") and feature(F, d, 6, 7, "pron_str_match") is False
    assert feature(F, d, 6, 7, "gender_agree") and feature(F, d, 6, 7, "closest_compatible")
    assert feature(F, d, 2, 6, "gender_disagree")                                        # she / He
    assert feature(F, d, 0, 2, "person_disagree") and feature(F, d, 0, 2, "quote=one")   # "I" quoted, she not
    assert feature(F, d, 0, 1, "quote=same") and feature(F, d, 0, 1, "sentence_distance=0")
    assert feature(F, d, 4, 5, "later_definite") and feature(F, d, 0, 7, "mention_distance=5-9")
    assert feature(F, d, 1, 5, "gender_agree")                                           # Mr. -> m, man -> m
    assert feature(F, d, 0, 5, "sentence_distance=1")


def test_features_never_read_cop_or_appos_links():
    """Removing the COP row changes the clusters (link policy) but not one feature."""
    without = "\n".join(ANN(r) for r in ROWS if r[0] != "COP") + "\n"
    a, b = doc("singleton"), doc("singleton", without)
    np.testing.assert_array_equal(cf.pair_feature_matrix(a), cf.pair_feature_matrix(b))


def test_pack_bits_round_trip_and_table():
    rng = np.random.default_rng(0)
    F = rng.random((500, cf.N_FEATURES)) < 0.3
    np.testing.assert_array_equal(cf.unpack_bits(cf.pack_bits(F)), F)
    X = cf.build_pair_features([doc(), doc("drop")])
    for k, dd in enumerate([doc(), doc("drop")]):
        np.testing.assert_array_equal(X.dense(k), cf.pair_feature_matrix(dd))
    sub = cf.restrict_document(X, 0, [1, 3, 6])
    np.testing.assert_array_equal(sub.dense(0), X.dense(0)[cf.pair_index([1, 1, 3], [3, 6, 6], 8)])
    assert len(cf.feature_table()) == cf.N_FEATURES and len(set(cf.FEATURE_NAMES)) == cf.N_FEATURES


def test_mention_heads():
    assert cf.mention_head("the eminent silk gown who said".split()) == "gown"
    assert cf.mention_head("lincoln 's inn hall".split()) == "hall"
    assert cf.mention_head("my kingdom of heaven".split()) == "kingdom"
    assert cf.mention_head("mrs. joe gargery , who married".split()) == "gargery"


# --------------------------------------------------------------------------- the real corpus
@needs_data
def test_real_corpus_counts():
    names = lb.document_names()
    assert len(names) == lb.N_DOCUMENTS
    docs = lb.load_documents(names[:10])
    for d in docs:
        assert d.n_mentions == len(d.clusters) and d.clusters[0] == 0
        np.testing.assert_array_equal(d.clusters, lb.canonical_clustering(d.clusters))
    with pytest.raises(ValueError, match="unknown litbank document"):
        lb.load_document("moby_dick")


@needs_data
def test_real_features_of_one_document():
    d = lb.load_document("1023_bleak_house_brat")
    X = cf.build_pair_features([d])
    assert X.n_mentions[0] == d.n_mentions and len(X.index[0]) == d.n_pairs
    F = X.dense(0)
    assert np.all((F == 0) | (F == 1)) and np.all(F[:, 0] == 1)
