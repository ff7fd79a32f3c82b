"""The engine: paper-independent algorithms for training latent-variable models.

* :mod:`.gmm` -- Generalized Majorization-Minimization: the driver (Algorithm 1 for any bound family) and
  bound families (k-means, latent SSVMs, a smooth 1-D problem), with k-means initialisations;
* :mod:`.lssvm` -- latent structural SVMs: the model interface, feature containers, the exact objective,
  the learners (CCCP, self-paced learning, group norm) and every convex inner solver (:mod:`.lssvm.inner`);
  generic models (enumerable states, ragged positions, a latent chain) in :mod:`.lssvm.models`;
* :mod:`.mixreg` -- mixture regression: EM, the convex relaxation's max-min and min-min algorithms;
* :mod:`.kmeans` -- k-means on plain arrays (Lloyd's algorithm, k-means++ seeding): the one every chapter uses;
* :mod:`.kernels` -- validated wrappers of the Cython kernels (:mod:`._kernels`, each with a NumPy twin
  ``*_ref``); :mod:`.validation` -- argument checks; :mod:`.metrics` -- ranking measures (average precision).

Nothing here imports a data domain (``lvmrepro.tasks``), an experiment or the book: a model for new data
plugs in through the interfaces documented in :mod:`.lssvm.base` and :mod:`.gmm.driver`.
"""
