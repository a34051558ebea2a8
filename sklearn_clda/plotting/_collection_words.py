"""How each collection words one topic, as small multiples of word bars."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import HasMethods, validate_params

from .._corpus import StrictInterval, check_group_labels
from ..inspection._utils import require_pandas
from ._base import check_matplotlib, collection_positions, default_collections
from ._topic_words import draw_word_bars

__all__ = ["CollectionWordsDisplay"]

_POSITIVE_INT = StrictInterval(Integral, 1, None, closed="left")


class CollectionWordsDisplay:
    """The words each collection uses in one topic more than the others do.

    One panel per collection, with a horizontal bar for each of its most
    distinctive words in the topic (largest z-score at the top): the
    z-scores of :func:`~sklearn_clda.inspection.topic_words_by_collection`,
    of the word's log-odds in the collection against the other
    collections, among the tokens of the topic. A dotted line marks
    ``z = 2``, about what chance gives. It is the picture of a topic's
    "perspectives" that stm draws for a content covariate.

    Use :meth:`from_estimator` to build it from a fitted topic model and
    its documents; the constructor takes precomputed values. All
    attributes are set in :meth:`plot`.

    Parameters
    ----------
    words : array-like of str of shape (n_collections, n_words)
        Each collection's words, most distinctive first.

    z : array-like of shape (n_collections, n_words)
        Their z-scores.

    collections : array-like of shape (n_collections,)
        The collections' labels, in the rows' order.

    topic : int, default=None
        The topic's index, used in the panel titles.

    tokens : array-like of shape (n_collections,), default=None
        Each collection's expected number of tokens in the topic, shown in
        the panel titles.

    against : str or int, default=None
        The one collection the z-scores compare with (see
        :func:`~sklearn_clda.inspection.topic_words_by_collection`), named
        on the value axis; ``None``: all the others.

    Attributes
    ----------
    axes_ : ndarray of matplotlib Axes
        The panels: of shape ``(n_rows, n_cols)`` (cells beyond the last
        collection are switched off) or the shape of the ``ax`` passed.

    bounding_ax_ : matplotlib Axes or None
        The single Axes passed as ``ax`` and divided into the grid, if any.

    bars_ : list of matplotlib BarContainer
        One container per collection, with one bar per word.

    figure_ : matplotlib Figure
        Figure containing the panels.

    See Also
    --------
    sklearn_clda.inspection.topic_words_by_collection : The numbers drawn.
    TopicWordsDisplay : The top words of each topic.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.plotting import CollectionWordsDisplay
    >>> vocab = ["team", "ball", "match", "game", "vote", "party", "parliament", "congress"]
    >>> X = np.array([[6, 5, 3, 0, 0, 0, 0, 0], [0, 0, 0, 0, 6, 5, 3, 0]] * 10
    ...              + [[6, 5, 0, 3, 0, 0, 0, 0], [0, 0, 0, 0, 6, 5, 0, 3]] * 10)
    >>> groups = ["uk"] * 20 + ["us"] * 20
    >>> clda = CompoundLDA(n_components=2, max_iter=200, random_state=0).fit(X, groups=groups)
    >>> sport = int(np.argmax(clda.components_[:, vocab.index("ball")]))
    >>> disp = CollectionWordsDisplay.from_estimator(
    ...     clda, X, groups, sport, feature_names=vocab, n_words=3)
    >>> disp.axes_.shape
    (1, 2)
    >>> [label.get_text() for label in disp.axes_[0, 0].get_yticklabels()][0]
    'match'
    >>> plt.close("all")
    """

    def __init__(self, words, z, *, collections, topic=None, tokens=None, against=None):
        self.words = words
        self.z = z
        self.collections = collections
        self.topic = topic
        self.tokens = tokens
        self.against = against

    def _titles(self, n_panels):
        labels = [str(c) for c in np.asarray(self.collections, dtype=object).ravel()]
        if len(labels) != n_panels:
            raise ValueError(f"collections has {len(labels)} entries for {n_panels} rows of words.")
        where = "" if self.topic is None else f"Topic {self.topic} in "
        if self.tokens is None:
            return [f"{where}{label}" for label in labels]
        tokens = np.asarray(self.tokens, dtype=np.float64).ravel()
        if tokens.shape != (n_panels,):
            raise ValueError(f"tokens has shape {tokens.shape} for {n_panels} collections.")
        return [f"{where}{label} ({t:,.0f} tokens)" for label, t in zip(labels, tokens)]

    @validate_params(
        {"n_cols": [_POSITIVE_INT, None], "sharex": ["boolean"]},
        prefer_skip_nested_validation=False,
    )
    def plot(self, ax=None, *, n_cols=None, sharex=True, bar_kw=None, figsize=None):
        """Plot each collection's words.

        Parameters
        ----------
        ax : matplotlib Axes or array-like of Axes, default=None
            ``None`` creates a new figure. One Axes (created as a subplot)
            is divided into the grid; an array-like gives one Axes per
            collection.

        n_cols : int, default=None
            Number of columns of the grid. ``None`` means
            ``min(4, n_collections)``.

        sharex : bool, default=True
            Whether the panels share one z-score axis.

        bar_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.barh`.

        figsize : tuple of float, default=None
            Size of a new figure; ``None`` sizes it to the grid.

        Returns
        -------
        display : CollectionWordsDisplay
            The display, with the artists stored as attributes.
        """
        check_matplotlib(f"{type(self).__name__}.plot")
        words = np.asarray(self.words, dtype=object)
        z = np.asarray(self.z, dtype=np.float64)
        if words.ndim != 2 or words.shape != z.shape:
            raise ValueError(
                "words and z must be 2-D arrays of the same shape (n_collections, "
                f"n_words), got {words.shape} and {z.shape}."
            )
        if not np.all(np.isfinite(z)):
            raise ValueError("z must hold finite z-scores.")
        titles = self._titles(words.shape[0])
        others = "the others" if self.against is None else str(self.against)
        draw_word_bars(self, ax, words, z, titles, n_cols=n_cols, sharex=sharex,
                       bar_kw=bar_kw, figsize=figsize, xlabel=f"z-score against {others}")
        for panel in np.ravel(self.axes_)[: words.shape[0]]:
            panel.axvline(2.0, color="0.5", linestyle=":", linewidth=1)
        return self

    @classmethod
    @validate_params(
        {
            "estimator": [HasMethods(["fit", "transform"])],
            "X": ["array-like", "sparse matrix"],
            "groups": ["array-like"],
            "topic": [Integral],
            "feature_names": ["array-like", None],
            "n_words": [_POSITIVE_INT],
            "prior": [StrictInterval(Real, 0, None, closed="neither")],
            "against": [str, Integral, None],
            "n_cols": [_POSITIVE_INT, None],
        },
        # topic_words_by_collection checks the rest, plot its keywords.
        prefer_skip_nested_validation=False,
    )
    def from_estimator(cls, estimator, X, groups, topic, *, collections=None,
                       feature_names=None, n_words=10, prior=100.0, against=None, n_cols=None,
                       ax=None, **plot_kw):
        """Plot how each collection words one topic of a fitted topic model.

        Parameters
        ----------
        estimator : estimator or Pipeline
            A fitted topic model with ``transform`` and ``components_``, or
            a fitted Pipeline ending with one (``X`` is then its input).

        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The documents whose words are counted.

        groups : array-like of shape (n_samples,)
            Collection label of each document (two labels or more).

        topic : int
            The topic to show.

        collections : array-like, default=None
            Labels of the collections to show (a panel each), in this order,
            as in ``groups``. ``None`` shows every collection (but
            ``against``), up to 40; with more, the 40 with the most
            documents, with a warning.

        feature_names : array-like of str of shape (n_features,), default=None
            The vocabulary; see
            :func:`~sklearn_clda.inspection.topic_words_by_collection`.

        n_words : int, default=10
            Words per collection.

        prior : float, default=100.0
            Pseudo-tokens of the informative prior; see
            :func:`~sklearn_clda.inspection.topic_words_by_collection`.

        against : str or int, default=None
            Compare every other collection with this one alone (its label in
            ``groups``), which then gets no panel; ``None``: each with all
            the others.

        n_cols : int, default=None
            Number of columns of the grid; ``None`` means
            ``min(4, n_collections)``.

        ax : matplotlib Axes or array-like of Axes, default=None
            Where to draw; see :meth:`plot`.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : CollectionWordsDisplay
            The plotted display.
        """
        from ..inspection import topic_words_by_collection

        check_matplotlib(f"{cls.__name__}.from_estimator")
        require_pandas(f"{cls.__name__}.from_estimator", via="topic_words_by_collection")
        table = topic_words_by_collection(estimator, X, groups, topic=topic, n_words=n_words,
                                          prior=prior, feature_names=feature_names,
                                          against=against)
        by = dict(list(table.groupby("collection", sort=False)))
        chosen = _chosen(np.array(list(by), dtype=object), groups, collections,
                         f"{cls.__name__}.from_estimator")
        display = cls(
            np.array([by[label]["word"].to_numpy() for label in chosen], dtype=object),
            np.array([by[label]["z"].to_numpy() for label in chosen]),
            collections=list(chosen),
            topic=int(topic),
            tokens=np.array([by[label]["collection_tokens"].iloc[0] for label in chosen]),
            against=against,
        )
        return display.plot(ax=ax, n_cols=n_cols, **plot_kw)


def _chosen(labels, groups, collections, caller):
    """The labels (among the table's ``labels``) of the collections to draw."""
    if collections is not None:
        return labels[collection_positions(labels, collections, caller,
                                           among="the table; its collections are")]
    # (labels as topic_words_by_collection read them, which checked them)
    names, counts = np.unique(check_group_labels(groups, len(groups), method=caller),
                              return_counts=True)
    documents = dict(zip(names.tolist(), counts.tolist()))
    return labels[default_collections(labels, [documents[label] for label in labels.tolist()],
                                      caller)]
