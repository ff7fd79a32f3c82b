"""MNIST digit pairs with a latent rotation: :mod:`.data` (the pairs and their rotated features) and :mod:`.model` (the latent SSVM model)."""
