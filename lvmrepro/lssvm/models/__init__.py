"""Concrete latent SSVM models built on :class:`lvmrepro.lssvm.model.EnumerableStatesModel`."""
