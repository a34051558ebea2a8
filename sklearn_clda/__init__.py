"""Compound LDA and collapsed-Gibbs LDA as scikit-learn estimators."""

from ._clda import CompoundLDA
from ._io import load_model, save_model
from ._lda_gibbs import LDAGibbs

__version__ = "0.1.0.dev0"

__all__ = ["CompoundLDA", "LDAGibbs", "__version__", "load_model", "save_model"]
