"""Noun-phrase coreference pieces for SPL Figure 1: pair features, spanning-forest inference, metrics.

* :mod:`.features` -- binary mention-pair features after Ng & Cardie (2002), packed per document;
* :mod:`.mentions` -- the per-mention attributes those features compare (head, person, number, gender,
  quotation, determiner) and their lexicons;
* :mod:`.forest` -- maximum spanning forests (prediction, latent completion, MITRE loss-augmented
  inference) and the greedy pairwise loss-augmented inference, validated wrappers over
  :mod:`lvmrepro.engine._kernels.coref` (plain reference: :mod:`lvmrepro.engine._kernels.coref_ref`);
* :mod:`.losses` -- the two training losses (MITRE link loss, pairwise loss);
* :mod:`.metrics` -- MUC, B-cubed, CEAF-e and the CoNLL average through ``scorch``, and the
  exact-string-match baseline.
"""
