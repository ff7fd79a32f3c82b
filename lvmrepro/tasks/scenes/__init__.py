"""Scene recognition with the reconfigurable bag-of-words model (G-MM section 5.3, issue 18).

* :mod:`lvmrepro.tasks.scenes.features` -- CNN region features of 15-Scene reduced by PCA (fitted on training images);
* :mod:`lvmrepro.tasks.scenes.parts` -- discovery of the initial shared parts from training regions;
* :mod:`lvmrepro.tasks.scenes.potts` -- Potts energy and alpha-expansion labellings;
* :mod:`lvmrepro.tasks.scenes.init` -- the initial part assignments (graph cut at lambda, random);
* :mod:`lvmrepro.tasks.scenes.bias` -- the Potts bias (eq. 13) for G-MM biased bounds.

The model itself is :class:`lvmrepro.tasks.scenes.model.RBoWModel`.
"""
