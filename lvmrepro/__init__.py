"""lvmrepro: reproducing four papers on training latent-variable models.

Chapters: ``gmm`` (Generalized Majorization-Minimization), ``groupnorm`` (group norm for latent
structural SVMs), ``spl`` (self-paced learning), ``convexmr`` (convex mixture regression).
Run any table or figure with ``lvmrepro run TARGET --scale {smoke,default,paper}``.
"""
__version__ = "0.1.0"

PAPERS = {
    "gmm": "Naderi et al., Generalized Majorization-Minimization (ICML 2019)",
    "groupnorm": "Chen, Batra, Freeman, Group Norm for Learning Structured SVMs with Unstructured Latent Variables (ICCV 2013)",
    "spl": "Kumar, Packer, Koller, Self-Paced Learning for Latent Variable Models (NIPS 2010)",
    "convexmr": "Quadrianto et al., Convex Relaxation of Mixture Regression with Efficient Algorithms (NIPS 2009)",
}
