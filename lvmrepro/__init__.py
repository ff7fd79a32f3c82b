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


def _install_book_figures():
    """In a Jupyter kernel, show matplotlib figures the book's way (:mod:`lvmrepro.book.figures`: SVG fitted to the page,
    alt text, stacked panels on a phone); nothing happens elsewhere, or with ``LVMREPRO_FIGURES=inline``."""
    import os
    import sys
    if os.environ.get("LVMREPRO_FIGURES", "").lower() == "inline":
        return
    # A Jupyter kernel's shell (ipykernel's ZMQInteractiveShell) has imported ipykernel before any cell runs, so
    # without it there is no kernel to install into: a script, a worker process or the CLI then imports the library
    # alone, not the book layer. figures.install() makes the exact check.
    if "ipykernel" not in sys.modules:
        return
    from lvmrepro.book import figures
    figures.install()


_install_book_figures()
