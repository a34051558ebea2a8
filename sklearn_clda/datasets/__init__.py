"""Datasets for topic models: a bundled corpus and synthetic generators.

- :func:`load_news16` loads the 16 Newsgroups corpus (10,764 documents in
  four collections) used to evaluate compound LDA.
- :func:`make_compound_corpus` simulates documents grouped into
  collections from the compound LDA generative model.
- :func:`make_lda_corpus` simulates documents from plain LDA.
"""

from ._base import load_news16
from ._synthetic import make_compound_corpus, make_lda_corpus

__all__ = ["load_news16", "make_compound_corpus", "make_lda_corpus"]
