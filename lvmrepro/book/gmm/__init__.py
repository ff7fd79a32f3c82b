"""The G-MM chapter's presentation modules, one per notebook of ``notebooks/gmm/``."""
