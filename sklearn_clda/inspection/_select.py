"""Choosing the number of topics: held-out perplexity, coherence, exclusivity,
stability, residual dispersion and fit time against K (stm's ``searchK``)."""

import time
import warnings
from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import KFold, StratifiedKFold, check_cv
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import _num_samples

from .._corpus import StrictInterval, check_group_labels
from .._sweeper import _effective_n_jobs
from ..metrics import topic_coherence, topic_exclusivity
from ..metrics._dispersion import estimator_dispersion
from ._stability import MAX_STABILITY_TOPICS, fold_stability, ranked_top_words
from ._utils import accepts, require_pandas, unwrap

__all__ = ["select_n_components"]

#: The measures of each fit, in the order of the result's columns.
MEASURES = ("perplexity", "coherence", "exclusivity", "stability", "dispersion", "fit_time")

# stm's defaults: the top 10 words of each topic, FREX weight 0.7.
_N_TOP_WORDS = 10
_EXCLUSIVITY_WEIGHT = 0.7


def umass_coherence(components, X):
    """Mimno et al.'s coherence of each topic's top 10 words on ``X`` (stm's
    ``semanticCoherence``, a sum over word pairs)."""
    return topic_coherence(X, components, top_n=min(_N_TOP_WORDS, np.shape(components)[1]))


def _check_n_components(n_components):
    values = np.asarray(n_components)
    flags = [v for v in np.asarray(n_components, dtype=object).ravel()
             if isinstance(v, (bool, np.bool_))]
    if values.ndim != 1 or values.size == 0 or values.dtype.kind not in "iu" or flags:
        raise ValueError(
            "n_components passed to select_n_components must be a non-empty list "
            f"of numbers of topics, got {n_components!r}."
        )
    if (values < 1).any() or np.unique(values).size != values.size:
        raise ValueError(
            "n_components passed to select_n_components must hold distinct "
            f"positive integers, got {values.tolist()}."
        )
    return np.sort(values).tolist()


def _folds(cv, X, labels, random_state):
    """The (train, test) index pairs, the same for every number of topics.

    An int gives shuffled folds, stratified by collection when ``labels``
    are given (so that every collection is seen in every training fold);
    None the default of 3.
    """
    n = _num_samples(X)
    if n == 0:
        raise ValueError("select_n_components got no documents to split into folds "
                         "(X has 0 rows).")
    if cv is None:
        cv = 3
    if isinstance(cv, Integral):
        if labels is not None:
            largest = int(np.unique(labels, return_counts=True)[1].max())
            if cv > largest:
                raise ValueError(
                    f"select_n_components with cv={cv} splits each collection into {cv} "
                    f"folds, but the largest collection has {largest} document(s); use "
                    "fewer folds, or a splitter that ignores the collections (e.g. "
                    "KFold) as cv."
                )
            return list(StratifiedKFold(cv, shuffle=True, random_state=random_state)
                        .split(np.zeros(n), labels))
        return list(KFold(cv, shuffle=True, random_state=random_state).split(np.zeros(n)))
    with warnings.catch_warnings():
        # (the labels are passed for the splitters that use them; the others
        # say that they ignore them, which is no news to the caller)
        warnings.filterwarnings("ignore", "The groups parameter is ignored by",
                                UserWarning)
        folds = list(check_cv(cv).split(X, labels, labels))
    if not folds:
        raise ValueError(
            f"cv passed to select_n_components gave no (train, test) splits: {cv!r}."
        )
    return folds


def _call_with_groups(method, X, groups):
    """``method(X, groups=groups)`` when it takes groups and they are given."""
    if groups is not None and accepts(method, "groups"):
        return method(X, groups=groups)
    return method(X)


def _fold_words(est, model, pre, seed):
    """The fit's ranked top words, to compare across the folds: names when
    the Pipeline's steps give them, else column indices; None when columns
    cannot be compared (a step refitted on each fold that names none)."""
    names = unwrap(est)[2]
    if names is None and pre is not None and any(
            not isinstance(step, str) and step is not None and get_tags(step).requires_fit
            for _, step in pre.steps):
        return None
    top = ranked_top_words(model.components_,
                           min(_N_TOP_WORDS, model.components_.shape[1]), seed)
    return top if names is None else np.asarray(names)[top]


def _check_tokens(X_part, part, fold):
    """A fold's training or held-out counts must hold a token."""
    if float(np.asarray(X_part.sum())) <= 0:
        raise ValueError(
            f"select_n_components: the {part} documents of fold {fold[0] + 1} of "
            f"{fold[1]} have no token ({X_part.shape[0]} document(s) without a word "
            "of the vocabulary); use fewer folds, or leave out the documents "
            "without words."
        )


def _evaluate(estimator, X, labels, train, test, n_topics, coherence, seed, fold):
    """Fit one clone with ``n_topics`` topics on ``train``; measure it on
    ``test``; ``seed`` orders its tied top words; ``fold``: (index, count)."""
    est = clone(estimator)
    model, pre, _ = unwrap(est)
    model.set_params(n_components=n_topics)
    X_train, X_test = _safe_indexing(X, train), _safe_indexing(X, test)
    if pre is not None:
        X_train = pre.fit_transform(X_train)
        X_test = pre.transform(X_test)
    _check_tokens(X_train, "training", fold)
    _check_tokens(X_test, "held-out", fold)
    g_train = None if labels is None else labels[train]
    g_test = None if labels is None else labels[test]
    start = time.perf_counter()
    _call_with_groups(model.fit, X_train, g_train)
    fit_time = time.perf_counter() - start
    scores = np.asarray(coherence(model.components_, X_train), dtype=np.float64)
    return {
        "top_words": _fold_words(est, model, pre, seed),
        "perplexity": float(_call_with_groups(model.perplexity, X_test, g_test)),
        "coherence": float(scores.mean()),
        "exclusivity": float(topic_exclusivity(
            model.components_, min(_N_TOP_WORDS, model.components_.shape[1]),
            frex_weight=_EXCLUSIVITY_WEIGHT,
        ).mean()),
        "dispersion": _fold_dispersion(model, X_train, g_train),
        "fit_time": fit_time,
    }


def _fold_dispersion(model, X_train, groups):
    """The fit's residual dispersion on its training documents (Taddy's and
    stm's ``tol``); NaN for a model without ``transform``."""
    if not hasattr(model, "transform"):
        return float("nan")
    return estimator_dispersion(model, X_train, groups, 0.01, "select_n_components",
                                warn=False).dispersion


def search_n_components(estimator, X, groups, n_components, cv, coherence, n_jobs,
                        random_state):
    """The measures of every (K, fold): a dict of arrays of shape (n_K, n_folds)
    under the names of ``MEASURES``, plus ``"n_components"`` (n_K,).

    A fold's stability is its fit's mean agreement with the other folds'
    fits of the same K (``fold_stability``)."""
    model, _, _ = unwrap(estimator)
    if not hasattr(model, "perplexity"):
        raise ValueError(
            "select_n_components needs a topic model with a perplexity method "
            f"(CompoundLDA, LDAGibbs, LatentDirichletAllocation), got "
            f"{type(model).__name__}."
        )
    values = _check_n_components(n_components)
    labels = None if groups is None else check_group_labels(
        groups, _num_samples(X), method="select_n_components"
    )
    score = umass_coherence if coherence == "umass" else coherence
    folds = _folds(cv, X, labels, random_state)
    n_fits = len(values) * len(folds)
    results = Parallel(n_jobs=max(1, min(_effective_n_jobs(n_jobs), n_fits)))(
        delayed(_evaluate)(estimator, X, labels, train, test, k, score, [k, fold],
                           (fold, len(folds)))
        for k in values for fold, (train, test) in enumerate(folds)
    )
    _add_stability(results, values, len(folds))
    _warn_dispersion(results, values, len(folds), model)
    out = {"n_components": np.asarray(values)}
    for name in MEASURES:
        out[name] = np.array([r[name] for r in results]).reshape(len(values), len(folds))
    return out


def _add_stability(results, values, n_folds):
    """Each fit's ``stability`` (replacing its ``top_words``): NaN, with a
    warning, where the folds' words cannot be compared or K is too large."""
    problems = set()
    for index, k in enumerate(values):
        same_k = results[index * n_folds:(index + 1) * n_folds]
        words = [r.pop("top_words") for r in same_k]
        if any(w is None for w in words):
            problems.add(
                "the Pipeline refits a step on each fold that names no words "
                "(no get_feature_names_out), so the folds' columns are other words")
            stability = np.full(n_folds, np.nan)
        elif k > MAX_STABILITY_TOPICS:
            problems.add(f"matching more than {MAX_STABILITY_TOPICS} topics takes too long")
            stability = np.full(n_folds, np.nan)
        else:
            stability = fold_stability(words)
        for r, value in zip(same_k, stability):
            r["stability"] = float(value)
    for problem in sorted(problems):
        warnings.warn(f"select_n_components leaves stability NaN where {problem}.",
                      UserWarning, stacklevel=4)


def _warn_dispersion(results, values, n_folds, model):
    """One warning for the fits whose dispersion is NaN, in the caller's
    process, whichever process fitted them."""
    if not hasattr(model, "transform"):
        warnings.warn(
            "select_n_components leaves the residual dispersion NaN: "
            f"{type(model).__name__} has no transform to infer the documents' topic "
            "proportions.", UserWarning, stacklevel=4)
        return
    missing = sorted({k for index, k in enumerate(values)
                      for r in results[index * n_folds:(index + 1) * n_folds]
                      if np.isnan(r["dispersion"])})
    if missing:
        warnings.warn(
            "select_n_components leaves the residual dispersion NaN at "
            f"n_components={missing}: there the model has more free parameters (topic "
            "mixtures and topics) than the training documents have word counts to "
            "check them against (see sklearn_clda.metrics.residual_dispersion).",
            UserWarning, stacklevel=4)


#: The parameters of ``select_n_components`` (and of the display that runs it).
PARAMETER_CONSTRAINTS = {
    "estimator": [HasMethods(["fit"])],
    "X": ["array-like", "sparse matrix"],
    "groups": ["array-like", None],
    "n_components": ["array-like"],
    "cv": ["cv_object"],
    "coherence": [StrOptions({"umass"}), callable],
    "n_jobs": [StrictInterval(Integral, None, None, closed="neither"), None],
    "random_state": ["random_state"],
}


@validate_params(
    PARAMETER_CONSTRAINTS,
    # The clones' fit, perplexity and the coherence validate their inputs.
    prefer_skip_nested_validation=False,
)
def select_n_components(
    estimator,
    X,
    groups=None,
    *,
    n_components,
    cv=3,
    coherence="umass",
    n_jobs=None,
    random_state=None,
):
    """Held-out perplexity, coherence, exclusivity, stability, dispersion and fit time for each K.

    There is no single right number of topics; this puts the usual
    evidence side by side, as R's ``stm::searchK`` does. For every ``K``
    in ``n_components`` and every cross-validation fold, a clone of
    ``estimator`` with ``n_components=K`` is fitted on the training
    documents and measured:

    - ``perplexity``: the estimator's ``perplexity`` on the fold's held-out
      documents (lower is better), with their collection labels for
      :class:`~sklearn_clda.CompoundLDA`;
    - ``coherence``: the mean over topics of a coherence score on the
      fold's training documents (higher is better): by default Mimno et
      al.'s (UMass) coherence of each topic's 10 most probable words, as
      stm's ``semanticCoherence``;
    - ``exclusivity``: the mean over topics of stm's exclusivity (higher
      is better): the sum of the FREX scores, with weight 0.7 on
      exclusivity, of the topic's 10 most probable words;
    - ``stability``: how alike the top 10 words of the folds' fits are
      (higher is better; Greene et al.'s stability analysis). Two ranked
      lists agree by their average Jaccard similarity (the share of words
      in common among the top 1, the top 2, ..., the top 10, averaged);
      the topics of two fits with this ``K`` (on different training
      documents) are matched one-to-one to agree most, and the fits agree
      by the mean over the matched pairs; a fold's value is its fit's mean
      agreement with the other folds' fits. It is 1 when every fit finds
      the same top words, whichever documents were held out;
    - ``dispersion``: Taddy's residual dispersion of the fit on the fold's
      training documents (:func:`~sklearn_clda.metrics.residual_dispersion`,
      stm's ``checkResiduals``, the "residuals" of ``searchK``): about 1
      when the topics explain how the documents vary, above 1 when they
      vary more, as with too few topics. NaN (with a warning) where the
      model has more free parameters than the documents have word counts
      to check them against, and for a model without ``transform``;
    - ``fit_time``: seconds of ``fit``.

    Coherence tends to fall and exclusivity to rise with ``K``; a good
    ``K`` is often where perplexity stops improving much and the two are
    balanced, and where stability has not dropped, then checked by reading
    the topics. Stability says how much of what a reader sees in the top
    words would come back with other documents (or another seed). It is
    highest at small ``K`` (one topic, the corpus' most frequent words, is
    found by every fit), so look for where it falls off, or a ``K`` where
    it peaks again. The dispersion falls as ``K`` grows and seldom reaches
    1 on real documents: where it stops falling, more topics no longer
    explain much more of how the documents differ.

    Parameters
    ----------
    estimator : estimator or Pipeline
        An unfitted (or fitted: it is cloned) topic model with an
        ``n_components`` parameter and a ``perplexity`` method
        (:class:`~sklearn_clda.CompoundLDA`,
        :class:`~sklearn_clda.LDAGibbs`,
        :class:`~sklearn.decomposition.LatentDirichletAllocation`), or a
        Pipeline ending with one, whose other steps (e.g. a
        CountVectorizer) are refitted on each training fold. Its other
        parameters (sweeps, priors, ``random_state``) are kept.

    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Document-term counts, or the Pipeline's input (e.g. texts).

    groups : array-like of shape (n_samples,), default=None
        Collection label of each document. Passed to ``fit`` and
        ``perplexity`` of a model that accepts them, and used to stratify
        the folds.

    n_components : array-like of int
        The numbers of topics to try (distinct positive integers).

    cv : int, cross-validation generator, iterable or None, default=3
        How documents are split. An int gives that many shuffled folds
        (:class:`~sklearn.model_selection.StratifiedKFold` on ``groups``
        when given, so that every collection is in every training fold;
        :class:`~sklearn.model_selection.KFold` otherwise); ``None`` 3 of
        them. A splitter is called as ``cv.split(X, groups, groups)`` (one
        that takes no groups, such as ``KFold``, without its warning that
        it ignores them): a splitter that holds
        out whole collections leaves their documents without a fitted
        mixture (see :class:`~sklearn_clda.CompoundLDA`). Every ``K`` uses
        the same folds.

    coherence : "umass" or callable, default="umass"
        Coherence score of the topics. ``"umass"`` is
        :func:`~sklearn_clda.metrics.topic_coherence` with ``top_n=10``.
        A callable is called as ``coherence(components, X_train)`` with the
        fitted ``components_`` and the fold's training counts, and returns
        one score per topic (higher is better), e.g.
        ``lambda c, X: topic_coherence(X, c, top_n=20)``.

    n_jobs : int, default=None
        Number of (K, fold) fits run in parallel with joblib. ``None``
        means 1. Each fit also uses the estimator's own ``n_jobs``.

    random_state : int, RandomState instance or None, default=None
        Shuffles the documents into folds when ``cv`` is an int.

    Returns
    -------
    results : pandas.DataFrame
        One row per number of topics, increasing, with columns
        ``n_components`` and, for each measure, its mean over the folds
        (``perplexity``, ``coherence``, ``exclusivity``, ``stability``,
        ``dispersion``, ``fit_time``) and
        standard deviation (``perplexity_std``, ...; ``ddof=0`` as in
        scikit-learn's ``cv_results_``). ``results.attrs["n_splits"]``
        holds the number of folds.

    See Also
    --------
    sklearn_clda.plotting.SelectNComponentsDisplay : The six measures in
        one figure.
    sklearn_clda.metrics.topic_coherence : The UMass coherence.
    sklearn.model_selection.GridSearchCV : Searching ``n_components`` with
        the estimator's ``score`` alone.

    Notes
    -----
    The perplexity is the estimators' own: document completion for the
    Gibbs models (comparable between :class:`~sklearn_clda.LDAGibbs` and
    :class:`~sklearn_clda.CompoundLDA`), a variational bound for
    scikit-learn's LDA. Coherence is computed on the training documents
    (stm does the same); pass a callable to use another reference corpus
    or measure.

    Stability compares words: columns of counts passed directly, or the
    words a Pipeline's vectorizer (refitted on each fold, with its own
    vocabulary) names with ``get_feature_names_out``; columns again when
    every step is stateless (e.g. ``HashingVectorizer``). It is NaN, with a
    warning, when a step refitted on each fold names no words, past 2000
    topics (matching them would take too long), and with one fold (a
    ``cv`` of one split). Words of tied weight (an empty topic's) are
    ranked at random, so that such topics agree by chance. With ``cv=2``
    the two fits share no document: their agreement is that of two halves
    of the corpus. The fits differ in their documents (and in their seed,
    unless ``random_state`` fixes it), so stability also measures how
    much one chain's topics vary (see :func:`align_chains`).

    References
    ----------
    .. [1] M. E. Roberts, B. M. Stewart and D. Tingley, "stm: An R package
       for structural topic models", Journal of Statistical Software
       91(2), 2019.
    .. [2] D. Mimno, H. M. Wallach, E. Talley, M. Leenders and
       A. McCallum, "Optimizing semantic coherence in topic models",
       EMNLP 2011.
    .. [3] D. Greene, D. O'Callaghan and P. Cunningham, "How many topics?
       Stability analysis for topic models", ECML PKDD 2014.

    Examples
    --------
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> from sklearn_clda.inspection import select_n_components
    >>> corpus = make_compound_corpus(n_topics=3, n_features=40, n_collections=2,
    ...                               docs_per_collection=40, doc_length=60,
    ...                               random_state=0)
    >>> results = select_n_components(
    ...     CompoundLDA(max_iter=60, random_state=0), corpus.data, corpus.groups,
    ...     n_components=[1, 3], cv=2, random_state=0)
    >>> results.columns.tolist()  # doctest: +NORMALIZE_WHITESPACE
    ['n_components', 'perplexity', 'perplexity_std', 'coherence',
     'coherence_std', 'exclusivity', 'exclusivity_std', 'stability',
     'stability_std', 'dispersion', 'dispersion_std', 'fit_time', 'fit_time_std']
    >>> results["n_components"].tolist()
    [1, 3]

    The corpus has three topics: one topic explains held-out words worse,
    and leaves the documents more varied than it explains.

    >>> bool(results["perplexity"].iloc[1] < results["perplexity"].iloc[0])
    True
    >>> results["dispersion"].round(2).tolist()
    [1.31, 0.76]
    """
    pd = require_pandas("select_n_components")
    raw = search_n_components(
        estimator, X, groups, n_components, cv, coherence, n_jobs, random_state
    )
    columns = {"n_components": raw["n_components"]}
    for name in MEASURES:
        columns[name] = raw[name].mean(axis=1)
        columns[f"{name}_std"] = raw[name].std(axis=1)
    out = pd.DataFrame(columns)
    out.attrs["n_splits"] = raw["perplexity"].shape[1]
    return out
