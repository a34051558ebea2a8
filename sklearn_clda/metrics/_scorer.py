"""A scorer that routes ``groups`` to the estimator's ``score``."""

from sklearn.utils.metadata_routing import MetadataRequest

__all__ = ["GroupsScorer"]


class GroupsScorer:
    """The estimator's own ``score``, with ``groups`` routed to it.

    For ``scoring=`` of ``GridSearchCV``, ``cross_validate`` and the like,
    under metadata routing (``sklearn.set_config(enable_metadata_routing=
    True)``): each held-out fold is scored by ``estimator.score(X,
    groups=...)`` with the fold's collection labels, as ``scoring=None``
    does from scikit-learn 1.8 on. scikit-learn 1.6 and 1.7 pass a
    ``Pipeline``'s ``score`` only what the pipeline itself requests, so
    with ``scoring=None`` its ``CompoundLDA`` step scored every fold
    without labels (an ``UnseenCollectionWarning`` each time, and the
    mean collection's prior for every document). This scorer requests
    ``groups`` itself, so the labels reach the step on every supported
    version. Without routing it is ``scoring=None``.

    See Also
    --------
    sklearn_clda.CompoundLDA.score : The approximate log-likelihood it returns.

    Examples
    --------
    >>> import numpy as np
    >>> import sklearn
    >>> from sklearn.feature_extraction.text import CountVectorizer
    >>> from sklearn.model_selection import KFold, cross_validate
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.metrics import GroupsScorer
    >>> texts = ["goal match team", "rocket orbit moon", "team goal win",
    ...          "moon launch orbit", "match win team", "orbit rocket launch"]
    >>> groups = np.array(["sport", "space"] * 3)
    >>> pipe = make_pipeline(CountVectorizer(), CompoundLDA(2, max_iter=20, random_state=0))
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     result = cross_validate(pipe, texts, params={"groups": groups},
    ...                             scoring=GroupsScorer(), cv=KFold(2))
    >>> bool(np.all(np.isfinite(result["test_score"])))
    True
    """

    def __call__(self, estimator, X, y=None, **params):
        """``estimator.score(X, **params)``: ``params`` hold the routed
        ``groups`` (``y`` is not passed on: the topic models ignore it)."""
        return estimator.score(X, **params)

    def get_metadata_routing(self):
        """The metadata this scorer requests: ``groups``, for ``score``.

        Returns
        -------
        routing : MetadataRequest
            ``groups`` requested by the ``score`` method.
        """
        request = MetadataRequest(owner=type(self).__name__)
        request.score.add_request(param="groups", alias=True)
        return request

    def __repr__(self):
        return "GroupsScorer()"
