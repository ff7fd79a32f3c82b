"""G-MM chapter (Naderi et al., ICML 2019): :mod:`.theory` (Figure 1, Theorems 1-2), :mod:`.clustering`
(Table 1, Table 4 clustering rows, Figure 5, dead clusters), :mod:`.eta` (Figure 2), :mod:`.walk` (the
random walk over valid bounds), :mod:`.mammals` (Table 2, Figures 3 and 6)."""
