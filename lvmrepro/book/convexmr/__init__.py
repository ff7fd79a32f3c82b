"""The convex mixture-regression chapter's presentation modules, one per notebook of ``notebooks/convexmr/``."""
