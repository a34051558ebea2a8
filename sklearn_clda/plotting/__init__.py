"""Plotting displays for fitted topic models, in scikit-learn's Display style.

Each display holds the values to plot, draws them with ``plot(ax=None,
...)`` (which returns the display, with the matplotlib artists as
attributes ``ax_`` or ``axes_``, ``figure_``, ...) and is usually built
with a ``from_estimator`` class method:

- :class:`CollectionTopicDisplay`: topic proportions of each collection of a
  :class:`~sklearn_clda.CompoundLDA`, as grouped bars with posterior
  intervals or as a heatmap;
- :class:`CollectionDifferenceDisplay`: how two collections' topic shares
  differ (or one collection's from the rest), a row per topic with its
  posterior interval;
- :class:`CollectionDistanceDisplay`: how far apart every two
  collections' topic mixtures are, as a matrix, alike collections side by
  side;
- :class:`PermutationTestDisplay`: the same differences against those of
  fits with shuffled collection labels (a permutation test);
- :class:`TopicWordsDisplay`: the top words of each topic;
- :class:`CollectionWordsDisplay`: the words each collection uses in one
  topic more than the others do;
- :class:`PiTraceDisplay`: trace plots and autocorrelations of the kept
  draws of the collection mixtures;
- :class:`PerplexityDisplay`: held-out perplexity (or any score) against
  the number of topics for several models, from results, a grid search's
  ``cv_results_`` or by fitting the models;
- :class:`TraceDisplay`: log-likelihood and learned priors against the
  Gibbs sweep;
- :class:`CollectionTrendDisplay`: each topic's share across ordered
  collections (years, ratings), with posterior bands;
- :class:`TopicEffectDisplay`: how a covariate of the documents moves each
  topic's share, a row per topic with its interval (stm's
  ``plot.estimateEffect`` for document covariates);
- :class:`TopicShareCurveDisplay`: each topic's share along one covariate
  of the documents, a curve with its band (``plot.estimateEffect`` with
  ``method="continuous"``);
- :class:`TopicCorrelationDisplay`: the graph of topics that appear
  together in documents (stm's ``plot.topicCorr``);
- :class:`TopicHierarchyDisplay`: the tree of topics merged by how alike
  their words are (BERTopic's ``visualize_hierarchy``);
- :class:`TopicMapDisplay`: the topics as circles on a plane, alike topics
  close, once per collection (LDAvis's intertopic distance map);
- :class:`TopicQualityDisplay`: each topic's coherence against its
  exclusivity (stm's ``topicQuality``);
- :class:`SelectNComponentsDisplay`: held-out perplexity, coherence,
  exclusivity, stability, residual dispersion and fit time against the
  number of topics;
- :func:`autocorrelation`: the sample autocorrelation of a chain.

matplotlib is imported only when something is drawn (``pip install
matplotlib``); :func:`autocorrelation` needs only NumPy. The five displays
drawn from a table of :mod:`sklearn_clda.inspection`
(:class:`CollectionDifferenceDisplay`, :class:`CollectionDistanceDisplay`,
:class:`CollectionWordsDisplay`, :class:`PermutationTestDisplay`,
:class:`TopicCorrelationDisplay`) need pandas as well (``pip install
"sklearn-clda[plot,inspect]"``).
"""

from ._acf import autocorrelation
from ._collection_distance import CollectionDistanceDisplay
from ._collection_topic import CollectionTopicDisplay
from ._correlation import TopicCorrelationDisplay
from ._difference import CollectionDifferenceDisplay
from ._effect import TopicEffectDisplay
from ._collection_words import CollectionWordsDisplay
from ._permutation import PermutationTestDisplay
from ._perplexity import PerplexityDisplay
from ._pi_trace import PiTraceDisplay
from ._hierarchy import TopicHierarchyDisplay
from ._map import TopicMapDisplay
from ._quality import TopicQualityDisplay
from ._select import SelectNComponentsDisplay
from ._share_curve import TopicShareCurveDisplay
from ._topic_words import TopicWordsDisplay
from ._trace import TraceDisplay
from ._trend import CollectionTrendDisplay

__all__ = [
    "CollectionDifferenceDisplay",
    "CollectionDistanceDisplay",
    "CollectionTopicDisplay",
    "CollectionWordsDisplay",
    "CollectionTrendDisplay",
    "PermutationTestDisplay",
    "PerplexityDisplay",
    "PiTraceDisplay",
    "SelectNComponentsDisplay",
    "TopicCorrelationDisplay",
    "TopicEffectDisplay",
    "TopicHierarchyDisplay",
    "TopicMapDisplay",
    "TopicQualityDisplay",
    "TopicShareCurveDisplay",
    "TopicWordsDisplay",
    "TraceDisplay",
    "autocorrelation",
]
