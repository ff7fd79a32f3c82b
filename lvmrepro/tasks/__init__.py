"""Tasks: one package per data domain, each holding its data loader (``data``), its model (``model``) and
the helpers only that domain needs.

* :mod:`.clustering` -- D31, Cloud, Norm-25, GMM-200 (G-MM Table 1);
* :mod:`.digits` -- MNIST digit pairs with a latent rotation (group norm, self-paced learning);
* :mod:`.mammals` -- mammal images with a latent box (G-MM Table 2, self-paced learning Table 2);
* :mod:`.components` -- mixtures of mirrored HOG root templates (group norm Figures 3-4, Tables 3-4);
* :mod:`.motifs` -- UniPROBE motif finding (self-paced learning Table 1, Figure 2);
* :mod:`.coref` -- noun-phrase coreference on LitBank (self-paced learning Figure 1);
* :mod:`.scenes` -- reconfigurable bag-of-words scene recognition (G-MM Table 3);
* :mod:`.motion` -- Hopkins 155 motion segmentation (convex mixture regression);
* :mod:`.regression` -- synthetic mixture-regression data (convex mixture regression).

A task imports the engine and the data registry, never an experiment or the book.
"""
