"""Evaluation of topic models: held-out perplexity, coherence, topic summaries.

- :func:`doc_completion_split` splits a corpus for document completion
  (the paper's perplexity protocol);
- :func:`perplexity` and :func:`heldout_log_likelihood` score the test
  tokens of held-out documents given their observed tokens with any fitted
  topic model; :func:`perplexity_from_estimates` does so from given point
  estimates;
- :func:`topic_coherence` scores how often each topic's top words occur
  together in a reference corpus (UMass of Mimno et al. 2011, NPMI, C_V);
- :func:`topic_exclusivity` is stm's exclusivity of each topic's top words;
- :func:`residual_dispersion` (and :func:`residual_dispersion_from_estimates`)
  is Taddy's check that the topics explain how the documents vary (stm's
  ``checkResiduals``);
- :func:`topic_sizes`, :func:`top_words`, :func:`top_word_indices` and
  :func:`align_topics` summarize and compare topics;
- :class:`GroupsScorer` scores held-out folds with their collection labels
  in ``GridSearchCV`` and ``cross_validate``.
"""

from ._coherence import topic_coherence
from ._dispersion import residual_dispersion, residual_dispersion_from_estimates
from ._exclusivity import topic_exclusivity
from ._perplexity import (
    doc_completion_split,
    heldout_log_likelihood,
    perplexity,
    perplexity_from_estimates,
)
from ._scorer import GroupsScorer
from ._topics import align_topics, top_word_indices, top_words, topic_sizes

__all__ = [
    "GroupsScorer",
    "align_topics",
    "doc_completion_split",
    "heldout_log_likelihood",
    "perplexity",
    "perplexity_from_estimates",
    "residual_dispersion",
    "residual_dispersion_from_estimates",
    "top_word_indices",
    "top_words",
    "topic_coherence",
    "topic_exclusivity",
    "topic_sizes",
]
