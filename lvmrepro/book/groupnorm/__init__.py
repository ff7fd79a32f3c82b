"""The group-norm chapter's presentation modules, one per notebook of ``notebooks/groupnorm/``."""
