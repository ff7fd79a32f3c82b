"""Hopkins 155 motion segmentation: :mod:`.data` (sequences as epipolar regressions) and :mod:`.published` (other methods' cited results)."""
