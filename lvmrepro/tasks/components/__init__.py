"""The group-norm components chapter (mixtures of mirrored HOG root templates on the mammals photographs):
stage-1 initialisation by appearance (:mod:`.stage1`) and the pictures of Fig. 4 (:mod:`.glyph`).
The model is :mod:`lvmrepro.tasks.components.model`; the data protocol :mod:`lvmrepro.tasks.components.data`."""
