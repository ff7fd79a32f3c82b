"""Examples for the book's part "On your own data": small, complete uses of the engine on data a reader brings.

* :mod:`.bags` -- a latent structural SVM written from scratch (multiple-instance classification of bags of
  instances, the latent value being each bag's witness) and trained with CCCP, self-paced learning and G-MM.

The examples import only the engine (and NumPy, SciPy, Matplotlib): they run with the package's run-time
dependencies alone, which ``tests/test_lean_install.py`` checks on a wheel installed into a fresh environment.
"""
