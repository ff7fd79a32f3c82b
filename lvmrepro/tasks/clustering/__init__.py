"""Clustering data of G-MM Table 1: :mod:`.data` (the four data sets by name) and :mod:`.synthetic` (Norm-25, GMM-200 from a seed)."""
