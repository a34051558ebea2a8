"""Reading a fitted topic model: labels, documents, collections, choosing K.

Tools for the question compound LDA is fitted to answer, how collections
differ in what they talk about, in the spirit of R's ``stm``:

- :func:`topic_info`: one row per topic, the largest first: its size,
  words, coherence, exclusivity, documents and the collection that uses
  it most (BERTopic's ``get_topic_info``);
- :func:`topic_labels`: words that label each topic, by probability, FREX,
  lift, score or relevance (``stm::labelTopics``, LDAvis);
- :func:`find_topics`: the topics most about given words (stm's
  ``findTopic``);
- :func:`representative_documents`: the documents most about each topic,
  optionally within one collection (``stm::findThoughts``);
- :func:`topic_words_by_collection`: the words each collection uses in a
  topic more than the others do (the question of stm's content
  covariates, by Monroe et al.'s log-odds);
- :func:`collection_topic_summary`: every collection's topic shares with
  posterior intervals and effective sample sizes;
- :func:`compare_collections`: the posterior difference of two
  collections' topic shares, from the joint draws
  (``stm::estimateEffect``);
- :func:`permutation_test`: whether two collections differ more than
  shuffled labels would make them (``stm::permutationTest``);
- :func:`collection_distances`: how far apart every two collections'
  topic mixtures are, with posterior intervals: which collections talk
  about the same things;
- :func:`document_collections`: which collection each document reads
  like, ``p(collection | words)``: documents that read like another
  collection, or where new documents fit;
- :func:`collection_trend`: each topic's linear trend across ordered
  collections (years, ratings), with its posterior (stm's
  ``estimateEffect`` with a continuous covariate);
- :func:`topic_effects`: how covariates of the documents (a date, an
  author's trait) move topic shares, a regression that carries the
  shares' uncertainty (``stm::estimateEffect`` for document covariates),
  and :func:`topic_share_curves`, each topic's share along one covariate
  as a smooth curve with its interval (``plot.estimateEffect`` with a
  spline);
- :func:`effective_sample_size`: the effective sample size of MCMC draws,
  of one chain or several;
- :func:`rhat`: whether chains (or the halves of one) agree, the
  rank-normalized split R-hat;
- :func:`align_chains`: several fits of one CompoundLDA with their topics
  lined up, so that the two summaries above can pool them (the question
  of stm's ``selectModel``: how much do the results move with the seed);
- :func:`topic_hierarchy`: the topics merged step by step, the most
  alike first, each group labelled with its words (BERTopic's
  ``hierarchical_topics``), and :func:`topic_themes`, its cut into a
  number of named themes for the ``topic_groups`` of the functions below;
- :func:`topic_map`: the topics on a plane, alike topics close (LDAvis's
  intertopic distance map);
- :func:`topic_correlation`: which topics appear together in documents,
  across the corpus or within its collections (``stm::topicCorr``);
- :func:`select_n_components`: held-out perplexity, coherence, exclusivity,
  stability, residual dispersion and fit time against the number of topics
  (``stm::searchK``).

The functions that return tables return pandas DataFrames and need pandas
(``pip install pandas``), imported only when they are called.
"""

from ._chains import align_chains
from ._collection_distances import collection_distances
from ._collection_words import topic_words_by_collection
from ._collections import collection_topic_summary, collection_trend, compare_collections
from ._correlation import topic_correlation
from ._curves import topic_share_curves
from ._document_collections import document_collections
from ._documents import representative_documents
from ._effects import topic_effects
from ._ess import effective_sample_size
from ._find import find_topics
from ._hierarchy import topic_hierarchy, topic_themes
from ._info import topic_info
from ._labels import topic_labels
from ._map import topic_map
from ._permutation import permutation_test
from ._rhat import rhat
from ._select import select_n_components

__all__ = [
    "align_chains",
    "collection_distances",
    "collection_topic_summary",
    "collection_trend",
    "compare_collections",
    "document_collections",
    "effective_sample_size",
    "find_topics",
    "permutation_test",
    "representative_documents",
    "rhat",
    "select_n_components",
    "topic_correlation",
    "topic_effects",
    "topic_hierarchy",
    "topic_info",
    "topic_labels",
    "topic_map",
    "topic_share_curves",
    "topic_themes",
    "topic_words_by_collection",
]
