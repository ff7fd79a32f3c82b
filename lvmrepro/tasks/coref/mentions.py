"""Per-mention attributes of the coreference pair features (:mod:`lvmrepro.tasks.coref.features`): the
lexicons and the heuristics that give every mention of a document its head word, person, number, gender,
quotation and determiner, from the tokens, the sentence split, the mention spans, the mention types and the
entity classes only (no parser, no tagger; the COP/APPOS annotations and the chains are never read).  Heuristics:

* the *head* of a non-pronominal mention is its last word before the first post-modifier marker
  (``of``, a relative pronoun, a preposition, a comma or dash), with a possessive ``'s`` dropped;
* *person/number/gender* of pronouns come from the small lexicon :data:`PRONOUNS`; a non-pronoun is
  third person, singular if a PER name, plural if its head is in :data:`PLURAL_HEADS` or a nominal
  head ending in ``s`` (not ``ss``/``us``/``is``), gendered by the title or head words in
  :data:`MALE_WORDS` / :data:`FEMALE_WORDS`, and neuter when its entity class is not PER;
* *quotations*: an opening curly quote starts a quotation and a closing one ends it; a straight double
  quote toggles.  A mention is in the quotation of its first token.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from lvmrepro.tasks.coref.data import ENTITY_CLASSES, MENTION_TYPES, Document

# --------------------------------------------------------------------------- lexicons
# pronoun -> (person, number, gender); number: 1 singular, 2 plural, 0 unknown; gender: 1 m, 2 f, 3 n, 0 unknown
PRONOUNS = {
    **dict.fromkeys(["i", "i.", "me", "my", "mine", "myself"], (1, 1, 0)),
    **dict.fromkeys(["we", "us", "our", "ours", "ourselves"], (1, 2, 0)),
    **dict.fromkeys(["you", "your", "yours", "yeh", "yer", "ye"], (2, 0, 0)),
    **dict.fromkeys(["yourself", "thou", "thee", "thy", "thine", "thyself"], (2, 1, 0)),
    "yourselves": (2, 2, 0),
    **dict.fromkeys(["he", "him", "his", "himself"], (3, 1, 1)),
    **dict.fromkeys(["she", "her", "hers", "herself"], (3, 1, 2)),
    **dict.fromkeys(["it", "its", "itself", "'t", "’t"], (3, 1, 3)),
    **dict.fromkeys(["they", "them", "their", "theirs", "themselves", "'em", "’em"], (3, 2, 0)),
    **dict.fromkeys(["one", "oneself"], (3, 1, 0)),
}
REFLEXIVES = frozenset({"myself", "ourselves", "yourself", "yourselves", "thyself", "himself", "herself",
                        "itself", "themselves", "oneself"})
FIRST_PERSON_SINGULAR = frozenset({"i", "i.", "me", "my", "mine", "myself"})
ARTICLES_DEMONSTRATIVES = frozenset({"the", "a", "an", "this", "that", "these", "those"})
DEFINITE = frozenset({"the"})
DEMONSTRATIVE = frozenset({"this", "that", "these", "those"})
INDEFINITE = frozenset({"a", "an", "another", "some"})
TITLES = frozenset({"mr", "mr.", "mrs", "mrs.", "miss", "ms", "ms.", "dr", "dr.", "sir", "lady", "lord",
                    "madame", "mme", "mme.", "mademoiselle", "monsieur", "m.", "master", "mister", "captain",
                    "colonel", "major", "general", "professor", "uncle", "aunt", "saint", "st.", "the"})
MALE_WORDS = frozenset({"mr", "mr.", "sir", "lord", "king", "prince", "duke", "earl", "baron", "monsieur",
                        "mister", "father", "man", "boy", "husband", "brother", "son", "uncle", "gentleman",
                        "fellow", "papa", "grandfather", "nephew", "men", "boys", "gentlemen", "brothers",
                        "sons", "fathers", "husbands", "squire", "bachelor", "widower", "lad"})
FEMALE_WORDS = frozenset({"mrs", "mrs.", "miss", "ms", "ms.", "lady", "queen", "princess", "duchess",
                          "countess", "madame", "mme", "mme.", "mademoiselle", "mother", "woman", "girl",
                          "wife", "sister", "daughter", "aunt", "niece", "mamma", "mama", "grandmother",
                          "widow", "maid", "women", "girls", "ladies", "sisters", "daughters", "mothers",
                          "wives", "heroine", "mistress", "lass"})
PLURAL_HEADS = frozenset({"men", "women", "children", "people", "folk", "folks", "gentlemen", "ladies",
                          "feet", "teeth", "mice", "geese", "brethren", "police", "cattle"})
HEAD_STOP = frozenset({"of", "who", "whom", "whose", "which", "that", "where", "when", ",", "--", "—", "-",
                       "(", ";", ":", "with", "in", "from", "on", "at", "to", "for", "by", "into",
                       "upon", "about", "whom", "like", "as", "than"})
STOPWORDS = frozenset(ARTICLES_DEMONSTRATIVES | set(PRONOUNS) | {
    "of", "and", "or", "in", "on", "at", "to", "for", "by", "with", "from", "as", "'s", "’s", "'", "’",
    ",", ".", "--", "—", "-", ";", ":", "!", "?", "\"", "“", "”", "‘", "(", ")", "who", "whom", "whose",
    "which", "what", "some", "any", "all", "no", "one", "two", "other", "own", "such", "so", "very",
    "old", "young", "little", "great", "good", "first", "last", "same", "mr.", "mrs.", "miss", "mr",
    "mrs", "sir", "lady", "lord", "_", "*", "is", "was", "be", "been", "had", "have", "not", "that"})
PUNCT = frozenset({",", ".", "--", "—", "-", ";", ":", "!", "?", "\"", "“", "”", "‘", "’", "'", "(", ")",
                   "_", "*", "[", "]"})
POSSESSIVE = frozenset({"'s", "’s", "'", "’"})


# --------------------------------------------------------------------------- per-mention attributes
def mention_head(tokens_lc: list[str]) -> str:
    """Head word heuristic: last word before the first post-modifier marker, possessive dropped."""
    cut = len(tokens_lc)
    for k in range(1, len(tokens_lc)):
        if tokens_lc[k] in HEAD_STOP:
            cut = k
            break
    words = [t for t in tokens_lc[:cut] if t not in PUNCT and t not in POSSESSIVE]
    return words[-1] if words else tokens_lc[-1]


def quotation_ids(doc: Document) -> np.ndarray:
    """Quotation id of every token of the document (-1 in narration); see the module docstring."""
    ids, current, count = [], -1, 0
    for sentence in doc.sentences:
        for tok in sentence:
            if tok == "“" or (tok == '"' and current < 0):
                current, count = count, count + 1
                ids.append(current)
            elif tok == "”" or tok == '"':
                ids.append(current)
                current = -1
            else:
                ids.append(current)
    return np.asarray(ids, dtype=np.int64)


@dataclass
class MentionAttributes:
    """Per-mention arrays (length n) the pair features are computed from."""
    type_id: np.ndarray
    ent_id: np.ndarray
    sentence: np.ndarray
    start: np.ndarray          # document token positions, end inclusive
    end: np.ndarray
    person: np.ndarray
    number: np.ndarray
    gender: np.ndarray
    quote: np.ndarray
    string_id: np.ndarray      # lower-cased full string
    nodet_id: np.ndarray       # lower-cased, leading articles/demonstratives removed
    head_id: np.ndarray
    reflexive: np.ndarray
    first_singular: np.ndarray
    determiner: np.ndarray     # 0 none, 1 definite, 2 demonstrative, 3 indefinite
    content: sp.csr_matrix     # (n, vocabulary) content-word incidence
    name_words: sp.csr_matrix  # (n, vocabulary) title-stripped words of proper names
    nodet_tokens: list


def _ids(values) -> np.ndarray:
    return np.unique(np.asarray(values, dtype=object).astype(str), return_inverse=True)[1].astype(np.int64)


def _incidence(word_sets, vocab) -> sp.csr_matrix:
    rows = [k for k, ws in enumerate(word_sets) for _ in ws]
    cols = [vocab.setdefault(w, len(vocab)) for ws in word_sets for w in ws]
    return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(word_sets), max(len(vocab), 1)))


def mention_attributes(doc: Document) -> MentionAttributes:
    offsets = doc.sentence_offsets()
    quotes = quotation_ids(doc)
    type_index = {t: k for k, t in enumerate(MENTION_TYPES)}
    ent_index = {e: k for k, e in enumerate(ENTITY_CLASSES)}
    cols = {k: [] for k in ("type", "ent", "sent", "start", "end", "person", "number", "gender", "quote",
                            "string", "nodet", "head", "reflexive", "first", "det")}
    content_sets, name_sets, nodet_tokens = [], [], []
    for m in doc.mentions:
        toks = [t.lower() for t in doc.sentences[m.sentence][m.start:m.end + 1]]
        text = " ".join(toks)
        is_pron = m.mention_type == "PRON"
        stripped = toks[1:] if len(toks) > 1 and toks[0] in ARTICLES_DEMONSTRATIVES else toks
        head = text if is_pron else mention_head(toks)
        if is_pron:
            person, number, gender = PRONOUNS.get(text, (0, 0, 0))
        else:
            person = 3
            number = (2 if head in PLURAL_HEADS or (m.mention_type == "NOM" and len(head) > 3 and head.endswith("s")
                                                   and not head.endswith(("ss", "us", "is")))
                      else 1 if m.mention_type == "PROP" and m.entity_class == "PER" else 0)
            if m.entity_class != "PER":
                gender = 3
            elif head in MALE_WORDS or toks[0] in MALE_WORDS:
                gender = 1
            elif head in FEMALE_WORDS or toks[0] in FEMALE_WORDS:
                gender = 2
            else:
                gender = 0
        first = toks[0]
        g0 = int(offsets[m.sentence]) + m.start
        for key, val in (("type", type_index[m.mention_type]), ("ent", ent_index[m.entity_class]),
                         ("sent", m.sentence), ("start", g0), ("end", g0 + m.n_tokens - 1),
                         ("person", person), ("number", number), ("gender", gender), ("quote", quotes[g0]),
                         ("string", text), ("nodet", " ".join(stripped)), ("head", head),
                         ("reflexive", is_pron and text in REFLEXIVES),
                         ("first", is_pron and text in FIRST_PERSON_SINGULAR),
                         ("det", 1 if first in DEFINITE else 2 if first in DEMONSTRATIVE
                          else 3 if first in INDEFINITE else 0)):
            cols[key].append(val)
        content_sets.append(set() if is_pron else {t for t in toks if t not in STOPWORDS and t.isalpha()})
        name_sets.append({t for t in toks if t not in TITLES and t not in PUNCT and t not in POSSESSIVE}
                         if m.mention_type == "PROP" else set())
        nodet_tokens.append(stripped)
    as_int = lambda k: np.asarray(cols[k], dtype=np.int64)  # noqa: E731
    vocab: dict = {}
    return MentionAttributes(
        type_id=as_int("type"), ent_id=as_int("ent"), sentence=as_int("sent"), start=as_int("start"),
        end=as_int("end"), person=as_int("person"), number=as_int("number"), gender=as_int("gender"),
        quote=as_int("quote"), string_id=_ids(cols["string"]), nodet_id=_ids(cols["nodet"]),
        head_id=_ids(cols["head"]), reflexive=np.asarray(cols["reflexive"], bool),
        first_singular=np.asarray(cols["first"], bool), determiner=as_int("det"),
        content=_incidence(content_sets, vocab), name_words=_incidence(name_sets, {}),
        nodet_tokens=nodet_tokens)
