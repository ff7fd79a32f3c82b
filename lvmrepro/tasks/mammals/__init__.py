"""Mammal images with a latent box: :mod:`.data` (images, HOG windows, splits) and :mod:`.model` (the box model)."""
