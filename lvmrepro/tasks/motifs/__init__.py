"""UniPROBE motif finding: :mod:`.data` (the folds), :mod:`.model` (the motif model) and :mod:`.analysis` (the figures' helpers)."""
