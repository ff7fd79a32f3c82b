"""The self-paced learning chapter's presentation modules, one per notebook of ``notebooks/spl/``."""
