"""LDAGibbs: latent Dirichlet allocation fitted by collapsed Gibbs sampling."""

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import StrOptions

from ._base import (
    MAX_CONCENTRATION,
    MIN_CONCENTRATION,
    _as_dtype,
    _BaseGibbsTopicModel,
    _output_dtype,
    concentration_interval,
)
from ._corpus import check_counts
from ._hyper import (
    collapse_topics,
    count_histogram,
    doc_histograms,
    update_asymmetric,
    update_symmetric,
)
from ._mh_sweeper import SAMPLER_CONSTRAINTS

__all__ = ["LDAGibbs"]


class LDAGibbs(_BaseGibbsTopicModel):
    """Latent Dirichlet allocation with a collapsed Gibbs sampler.

    A drop-in for :class:`sklearn.decomposition.LatentDirichletAllocation`
    that fits the same model by collapsed Gibbs sampling (Griffiths and
    Steyvers, 2004; the paper's CGS) in a compiled kernel instead of
    variational Bayes. The parameters, fitted attributes and methods keep
    scikit-learn's names and meanings wherever they carry over, so
    pipelines, model selection and pyLDAvis work unchanged.

    Parameters
    ----------
    n_components : int, default=10
        Number of topics.

    doc_topic_prior : float or array-like of shape (n_components,), default=None
        Dirichlet concentration of the document-topic distributions,
        called ``alpha`` in the literature. ``None`` means
        ``1 / n_components`` as in scikit-learn. Unlike scikit-learn's
        variational LDA, values above 1 are allowed, and an array gives an
        asymmetric prior.

    topic_word_prior : float, default=None
        Symmetric Dirichlet concentration of the topic-word distributions,
        called ``eta`` (or ``beta``). ``None`` means ``1 / n_components``.
        Both priors (every entry of an asymmetric one) must lie in
        [1e-100, 1e10]; the samplers' arithmetic overflows or underflows
        beyond.

    learn_priors : bool, str or list of str, default=False
        Priors to learn by Gibbs-EM (Wallach 2006; Minka's fixed points):
        ``"doc_topic_prior"``, ``"topic_word_prior"``, or ``True`` for both.
        Updates run every ``prior_update_every`` sweeps in the second half
        of burn-in; the priors are then held fixed so that every kept
        sample comes from one posterior. A scalar ``doc_topic_prior`` is
        learned as a symmetric prior and an array as an asymmetric one
        (pass ``np.full(n_components, 0.1)`` to learn an asymmetric prior
        from a symmetric start).

    prior_update_every : int, default=10
        Sweeps between Gibbs-EM updates.

    max_iter : int, default=1000
        Number of Gibbs sweeps over all tokens. (scikit-learn's default of
        10 passes suits variational Bayes, not a sampler.)

    burn_in : int, default=None
        Number of initial sweeps whose states are discarded. ``None`` means
        ``max_iter // 2``. Must be smaller than ``max_iter``.

    thin : int, default=10
        After burn-in, every ``thin``-th state is kept; ``components_`` and
        ``doc_topic_`` average the kept states.

    evaluate_every : int, default=-1
        Record the joint log-likelihood ``log p(w, z)`` in ``trace_`` every
        ``evaluate_every`` sweeps (and at sweep 0). Values ``<= 0`` record
        only the last sweep. Each evaluation costs about one sweep.

    max_doc_update_iter : int, default=100
        Maximum number of fixed-point iterations per document in
        ``transform``, ``score`` and ``perplexity``.

    mean_change_tol : float, default=1e-5
        Fold-in stops for a document when the mean absolute change of its
        topic proportions falls below this value (in [0, 1]).

    sampler : {"auto", "dense", "sparse", "mh"}, default="auto"
        The z-step kernel. ``"dense"`` draws each token's topic exactly
        from its full conditional, in time proportional to
        ``n_components``.
        ``"sparse"`` takes ``mh_steps`` Metropolis-Hastings steps per token
        from a proposal that is exact over the topics of the token's
        document (AliasLDA-like), in time proportional to the number of
        those topics: about the dense sampler's mixing per sweep, at a
        cost that stops growing with ``n_components`` once it exceeds the
        document lengths; it keeps no ``(n_features, n_components)``
        word-topic count table (each word's counts come from its tokens).
        It takes documents of at most ``2**(32 - b) - 1`` tokens, ``b``
        the bits of ``n_components - 1`` (4,194,303 tokens at 1000
        topics), and raises ``ValueError`` on longer ones.
        ``"mh"`` takes ``mh_steps`` steps that alternate
        word and document proposals (WarpLDA-style), in time independent
        of ``n_components`` and of the document lengths, but mixing less
        per sweep (several times the sweeps for the same perplexity). All
        leave the same conditional invariant (exact chains). ``"auto"``
        runs ``"dense"`` up to 100 topics and below 3 times the corpus's
        token-weighted mean document length, ``"mh"`` from 20,000 topics
        on (and where a document is too long for ``"sparse"``), and
        ``"sparse"`` in between (measured crossovers on news16;
        see the user guide, "Many topics"). All run ``n_jobs`` blocks in
        the partitioned scheme described there.

    mh_steps : int, default=2
        Metropolis-Hastings steps per token and sweep of the ``"sparse"``
        and ``"mh"`` samplers (in [1, 1000]; ignored by the dense one).
        With ``"mh"`` each pair of steps is one word proposal and one
        document proposal.

    n_jobs : int, default=None
        Number of blocks a sweep is split into, run on threads. ``None``
        means 1 and ``-1`` one per processor. With more than one, sweeps are
        partitioned (Yan et al. 2009): documents and words are cut into
        ``n_jobs`` blocks each, and each sweep runs ``n_jobs`` sub-steps in
        which the threads sweep cells that share no word or document
        counts; only the topic totals are up to one sweep old. Where
        that split would be too uneven (a vocabulary of a few dozen words),
        sweeps run AD-LDA instead (Newman et al. 2009: document shards
        against private copies of the word-topic counts, merged after the
        sweep). Blocks are capped at one per document and per 1,024 tokens,
        and run on at most one thread per CPU. Results are reproducible for
        a given positive ``n_jobs`` and ``random_state`` (whatever the
        number of CPUs) but differ between values of ``n_jobs``; only
        ``n_jobs=1`` is the exact serial sampler. A negative ``n_jobs``
        counts the CPUs of the machine that fits, so its results differ
        between machines with different numbers of CPUs. Unlike
        scikit-learn's LDA, ``n_jobs=None`` does not follow
        ``joblib.parallel_config``: a global setting would change the
        chain. ``transform``, ``score`` and ``perplexity`` also use the
        threads (over documents; their results do not depend on
        ``n_jobs``).

    verbose : int, default=0
        If positive, show each evaluation of the log-likelihood on stdout
        and, when stderr is a terminal, a progress bar over sweeps. The
        messages go to the ``sklearn_clda`` logger: at INFO level when
        ``verbose``, else at DEBUG level (see the user guide,
        "Interrupting, failures and messages").

    random_state : int, RandomState instance or None, default=None
        Seeds the sampler (initial assignments and every draw). The same
        integer gives bit-identical results. Pass an int for reproducible
        output across multiple function calls.
        See :term:`Glossary <random_state>`.

    warm_start : bool, default=False
        When True, ``fit`` keeps the chain's state, and the next ``fit`` on
        the same ``X`` continues that chain for ``max_iter`` more sweeps
        instead of starting a new one: two fits of 100 sweeps give the same
        result, bit for bit, as one of 200. ``burn_in`` counts the sweeps of
        the whole chain and is fixed by its first fit, so the samples kept
        so far stay and every later sweep past burn-in (every ``thin``-th)
        adds to them; ``n_iter_`` counts all sweeps and ``trace_`` and
        ``sweep_times_`` are extended. A different ``X``, a changed model
        setting (priors, ``n_components``, ``learn_priors``, ...) or burn-in
        raises ``ValueError``; ``random_state`` is not used again (the
        chain's random streams go on). ``n_jobs`` may change: the shards
        of another count get fresh streams seeded from the chain's. The kept
        state costs 4 bytes per token plus the sums of the kept samples,
        ``8 * n_components * (n_features + n_samples)`` bytes.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Topic-word pseudo-counts ``n_kw + topic_word_prior`` averaged over
        the kept samples. Normalize the rows to get the topic-word
        distributions (as with scikit-learn's LDA). float32 when fitted on
        float32 ``X``; an entry below float32's smallest positive number
        (a ``topic_word_prior`` under about 1.4e-45) is stored as that
        number, so every entry stays positive.

    doc_topic_ : ndarray of shape (n_samples_fit, n_components)
        Topic proportions of the training documents from the chain,
        ``(n_dk + alpha) / (n_d + K alpha)`` averaged over the kept samples
        (after ``partial_fit``: of the last batch's documents).
        ``transform(X)`` instead re-infers them with the topics held fixed.

    doc_topic_prior_ : float or ndarray of shape (n_components,)
        The document-topic prior used (learned if requested).

    topic_word_prior_ : float
        The topic-word prior used (learned if requested).

    bound_ : float
        Training-set perplexity at the chain's last state,
        ``exp(-sum_dw n_dw log(theta_d . phi_w) / N)`` with the posterior
        means of ``theta`` and ``phi`` given the last topic assignments
        (scikit-learn's LDA reports its final training perplexity under
        this name). After ``partial_fit``: the perplexity of its
        batch, each piece scored under the topics before it was folded in.

    n_iter_ : int
        Number of sweeps run by ``fit``, over the whole chain (see
        ``warm_start``). After ``partial_fit``: the number of updates of the
        topics (one per piece of about 50 documents) in its last call, to
        which ``sweep_times_`` and ``trace_`` then refer (``burn_in_`` is 0).

    n_batches_ : int
        ``partial_fit`` only: the number of batches folded into the model, a
        ``fit`` it started from counting as one.

    burn_in_ : int
        Number of sweeps discarded before keeping samples.

    n_tokens_ : int
        Number of tokens in the training corpus (after ``partial_fit``, in
        all batches folded in).

    sweep_times_ : ndarray of shape (`n_iter_`,)
        Wall-clock seconds of each sweep (including the collection-level
        and prior updates, excluding log-likelihood evaluations);
        ``n_tokens_ / sweep_times_`` is the sampler's throughput.

    trace_ : dict of ndarray
        Per evaluation: ``"iteration"``, ``"log_likelihood"`` (the joint
        ``log p(w, z)``), ``"seconds"`` since sampling started, and the
        current ``"doc_topic_prior"`` (its mean if asymmetric) and
        ``"topic_word_prior"`` (their path when learned). Suitable for
        ``pandas.DataFrame(trace_)``. After ``partial_fit``:
        ``"iteration"``, ``"log_likelihood"`` and ``"seconds"`` of each
        update of its call (the piece's log-likelihood, as in ``bound_``).

    n_features_in_ : int
        Number of features seen during :term:`fit`.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    CompoundLDA : Topic model for corpora split into known collections.
    sklearn.decomposition.LatentDirichletAllocation : Variational LDA.

    Notes
    -----
    ``transform`` is deterministic: it iterates the fixed point
    ``theta_d <- normalize(alpha + sum_w n_dw theta_d * phi_w / (theta_d .
    phi_w))`` with the topics ``phi`` (normalized ``components_``) held
    fixed, per document. Rows sum to one and an empty document gets the
    prior mean (uniform).

    ``score`` estimates the log-likelihood of unseen documents by
    document completion: each document's tokens, listed in column order,
    are dealt alternately into two halves; the topic proportions are
    inferred from one half and the other half is scored under them, and
    then the other way round, so every token is scored once.
    ``perplexity(X) = exp(-score(X) / n_tokens)``. The estimator is the
    same for :class:`CompoundLDA`, so scores compare across models and
    ``n_components``.

    Token order, the count tables and the per-token topic assignments are
    kept only during ``fit`` (unless ``warm_start``); the fitted model
    stores ``O(n_components * (n_features + n_samples_fit))`` numbers.

    ``partial_fit`` streams: it is stochastic collapsed variational Bayes
    (SCVB0, Foulds et al. 2013), not a Gibbs sampler (online Gibbs samplers
    measured markedly worse in one pass; see the user guide). A batch is
    cut into pieces of about 50 documents; each piece's expected topic
    counts are computed under the current topics held fixed (10 iterations
    of CVB0's document update) and merged into the topic-word counts, with
    a step that weighs every token by its position in the stream so that
    the first documents, seen before the topics took shape, fade out.
    Documents are not kept: memory does not grow with the number of
    batches. It ignores ``max_iter``, ``burn_in``, ``thin``,
    ``evaluate_every``, ``learn_priors`` and ``n_jobs`` (one thread), and
    keeps the priors fixed. Its first call on an unfitted estimator starts
    from near-uniform random topics; on a model fitted by ``fit`` it starts
    from that model's topics, ``components_ - topic_word_prior_`` counting
    as the ``n_tokens_`` tokens seen so far.

    References
    ----------
    .. [1] T. L. Griffiths and M. Steyvers, "Finding scientific topics",
       PNAS 101 (suppl. 1), 2004.
    .. [2] J. Foulds, L. Boyles, C. DuBois, P. Smyth and M. Welling,
       "Stochastic collapsed variational Bayesian inference for latent
       Dirichlet allocation", KDD 2013.

    Examples
    --------
    >>> from sklearn_clda import LDAGibbs
    >>> from sklearn_clda.datasets import make_lda_corpus
    >>> corpus = make_lda_corpus(n_topics=3, n_features=30, n_samples=60,
    ...                          doc_length=50, random_state=0)
    >>> lda = LDAGibbs(n_components=3, max_iter=200, random_state=0)
    >>> doc_topics = lda.fit_transform(corpus.data)
    >>> doc_topics.shape
    (60, 3)
    >>> lda.components_.shape
    (3, 30)
    """

    _parameter_constraints: dict = {
        **_BaseGibbsTopicModel._parameter_constraints,
        **SAMPLER_CONSTRAINTS,
        "doc_topic_prior": [None, concentration_interval(), "array-like"],
        "topic_word_prior": [None, concentration_interval()],
        "learn_priors": [
            "boolean",
            StrOptions({"doc_topic_prior", "topic_word_prior"}),
            list,
            tuple,
        ],
    }

    _learnable_priors = ("doc_topic_prior", "topic_word_prior")
    _default_learned_priors = ("doc_topic_prior", "topic_word_prior")

    def __init__(
        self,
        n_components=10,
        *,
        doc_topic_prior=None,
        topic_word_prior=None,
        learn_priors=False,
        prior_update_every=10,
        max_iter=1000,
        burn_in=None,
        thin=10,
        evaluate_every=-1,
        max_doc_update_iter=100,
        mean_change_tol=1e-5,
        sampler="auto",
        mh_steps=2,
        n_jobs=None,
        verbose=0,
        random_state=None,
        warm_start=False,
    ):
        self.n_components = n_components
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.learn_priors = learn_priors
        self.prior_update_every = prior_update_every
        self.max_iter = max_iter
        self.burn_in = burn_in
        self.thin = thin
        self.evaluate_every = evaluate_every
        self.max_doc_update_iter = max_doc_update_iter
        self.mean_change_tol = mean_change_tol
        self.sampler = sampler
        self.mh_steps = mh_steps
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state
        self.warm_start = warm_start

    # hooks -----------------------------------------------------------------
    def _doc_topic_prior_value(self):
        """The validated ``doc_topic_prior``: a float or an (n_components,) array."""
        K = self.n_components
        prior = self.doc_topic_prior
        if prior is None:
            return 1.0 / K
        try:
            # A 0-d array (a dict, say, is 0-d too) is one float.
            prior = (float(prior) if np.ndim(prior) == 0
                     else np.asarray(prior, dtype=np.float64))
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"doc_topic_prior must be a float or an array of {K} floats: {exc}"
            ) from exc
        if isinstance(prior, float):
            if not MIN_CONCENTRATION <= prior <= MAX_CONCENTRATION:
                raise ValueError(
                    f"doc_topic_prior must be in [{MIN_CONCENTRATION:g}, "
                    f"{MAX_CONCENTRATION:g}], got {prior!r}."
                )
            return prior
        if (
            prior.shape != (K,)
            or not np.all(np.isfinite(prior))
            or np.any(prior < MIN_CONCENTRATION)
            or np.any(prior > MAX_CONCENTRATION)
        ):
            raise ValueError(
                "doc_topic_prior must be a float or an array of "
                f"n_components={K} values in [{MIN_CONCENTRATION:g}, "
                f"{MAX_CONCENTRATION:g}], got shape {prior.shape} with values {prior}."
            )
        return prior.copy()

    def _start_run(self, run, n_features, n_groups):
        K = self.n_components
        run.doc_topic_prior = self._doc_topic_prior_value()
        run.topic_word_prior = (
            1.0 / K if self.topic_word_prior is None else float(self.topic_word_prior)
        )
        run.em_stats = {"docs": [], "lengths": [], "cells": [], "topics": []}

    def _sweep_prior(self, run):
        return _prior_row(run.doc_topic_prior, self.n_components)

    def _eta_value(self, run):
        return run.topic_word_prior

    def _update_priors(self, run, state, update):
        stats, learned = run.em_stats, run.learned
        symmetric = np.ndim(run.doc_topic_prior) == 0
        if "doc_topic_prior" in learned:
            # One collection: the (collection, topic) histogram is per topic.
            topics, lengths = doc_histograms(state, 1)
            stats["docs"].append(collapse_topics(topics) if symmetric else topics)
            stats["lengths"].append(lengths)
        if "topic_word_prior" in learned:
            stats["cells"].append(count_histogram(state.word_topic_counts().data))
            stats["topics"].append(count_histogram(state.nk))
        if not update:
            return
        if "doc_topic_prior" in learned:
            if symmetric:
                run.doc_topic_prior = update_symmetric(
                    stats["docs"], stats["lengths"], self.n_components, run.doc_topic_prior
                )
            else:
                run.doc_topic_prior = update_asymmetric(
                    stats["docs"], stats["lengths"], run.doc_topic_prior
                )
        if "topic_word_prior" in learned:
            run.topic_word_prior = update_symmetric(
                stats["cells"], stats["topics"], state.n_features, run.topic_word_prior
            )
        for v in stats.values():
            v.clear()

    def _trace_values(self, run):
        return {
            "doc_topic_prior": float(np.mean(run.doc_topic_prior)),
            "topic_word_prior": run.topic_word_prior,
        }

    def _finish_run(self, run):
        return {
            "doc_topic_prior_": run.doc_topic_prior,
            "topic_word_prior_": run.topic_word_prior,
        }

    def _fitted_values(self):
        K = self.components_.shape[0]
        return (("doc_topic_prior_", self.doc_topic_prior_, ((), (K,)), "positive"),
                ("topic_word_prior_", self.topic_word_prior_, ((),), "positive"))

    def _inference_prior(self, groups, n_docs, method):
        return _prior_row(self.doc_topic_prior_, self._n_features_out), np.zeros(
            n_docs, dtype=np.int32
        )

    # public API ------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the model to a document-term count matrix by Gibbs sampling.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts (e.g. from
            :class:`~sklearn.feature_extraction.text.CountVectorizer`).
            Non-integer values are rounded with a warning; negative, NaN
            or infinite values raise ``ValueError``.

        y : Ignored
            Not used, present for API consistency by convention.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        with self._fit_transaction():
            dtype = _output_dtype(X)
            X = check_counts(self, X, reset=True, method="fit")
            self._doc_topic_prior_value()
            fitted = self._fit_gibbs(X, np.zeros(X.shape[0], dtype=np.int32), 1, dtype=dtype)
            self._publish(_as_dtype(fitted, dtype))
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None):
        """Update the model with a batch of documents (streaming).

        Online stochastic collapsed variational Bayes (SCVB0; see Notes):
        the batch's documents are folded in piece by piece under the
        current topics, which move towards them. Memory does not grow with
        the number of batches; the documents are not kept. On an unfitted
        estimator the first call starts the stream; on a model fitted by
        ``fit`` it continues from that model's topics.

        The priors continue from the fitted model's (``doc_topic_prior_``
        and ``topic_word_prior_``): prior parameters changed with
        ``set_params`` since are not taken up; call ``fit`` to use them.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts of the batch, with the model's features. A
            batch without a single token (every document emptied by the
            vectorizer) is skipped with a ``UserWarning``, the model
            unchanged; a first batch needs tokens to start the model.

        y : Ignored
            Not used, present for API consistency by convention.

        Returns
        -------
        self : object
            The updated estimator. If the call fails or is interrupted, the
            estimator keeps its state from before the call.

        Examples
        --------
        >>> from sklearn_clda import LDAGibbs
        >>> from sklearn_clda.datasets import make_lda_corpus
        >>> corpus = make_lda_corpus(n_topics=3, n_features=30, n_samples=400,
        ...                          doc_length=50, random_state=0)
        >>> lda = LDAGibbs(n_components=3, random_state=0)
        >>> for start in range(0, 400, 100):
        ...     lda = lda.partial_fit(corpus.data[start:start + 100])
        >>> lda.n_batches_, lda.components_.shape
        (4, (3, 30))
        """
        with self._fit_transaction("partial_fit"):
            dtype = _output_dtype(X)
            first = not hasattr(self, "components_")
            self._check_partial_fit(X)
            X = check_counts(self, X, reset=first, method="partial_fit")
            self._doc_topic_prior_value()
            if self._empty_batch(X, first):
                return self
            carry = None if first else {
                "doc_topic_prior": np.copy(self.doc_topic_prior_)
                if np.ndim(self.doc_topic_prior_) else float(self.doc_topic_prior_),
                "topic_word_prior": float(self.topic_word_prior_),
            }
            fitted = self._partial_fit_online(
                X, np.zeros(X.shape[0], dtype=np.int32), 1, carry
            )
            self._publish(_as_dtype(fitted, dtype))
        return self

    def transform(self, X, *, normalize=True):
        """Infer the topic proportions of documents with the topics held fixed.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts.

        normalize : bool, default=True
            Whether to normalize the rows. ``False`` returns the fold-in's
            pseudo-counts ``doc_topic_prior + expected topic counts`` (rows
            summing to the prior's total plus the document's length), the
            analogue of scikit-learn's unnormalized variational parameters.

        Returns
        -------
        doc_topic_distr : ndarray of shape (n_samples, n_components)
            Topic proportions; each row sums to 1 when ``normalize``.
            Deterministic for a fitted model, and each row depends only on
            its document. In the model's dtype: float32 when it was fitted
            on float32 ``X``, else float64 (as scikit-learn's LDA).
        """
        return self._transform(X, None, normalize=normalize)

    def fit_transform(self, X, y=None, *, normalize=True):
        """Fit the model, then transform the training documents.

        Equal to ``fit(X).transform(X, normalize=normalize)``: the training
        documents' topic proportions are re-inferred with the final topics
        (the chain's own estimate is ``doc_topic_``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts.

        y : Ignored
            Not used, present for API consistency by convention.

        normalize : bool, default=True
            Whether to normalize the rows (see ``transform``).

        Returns
        -------
        doc_topic_distr : ndarray of shape (n_samples, n_components)
            Topic proportions; each row sums to 1 when ``normalize``.
        """
        self._check_normalize(normalize, "fit_transform")
        return self.fit(X).transform(X, normalize=normalize)

    def score(self, X, y=None, sample_weight=None):
        """Estimated held-out log-likelihood of documents (higher is better).

        Document completion: each document is split into two halves (see
        Notes in the class docstring); each half is scored under the topic
        proportions inferred from the other.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts.

        y : Ignored
            Not used, present for API consistency by convention.

        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the documents' log-likelihoods.

        Returns
        -------
        score : float
            Sum over documents (weighted if ``sample_weight``) of the
            completion log-likelihood, in nats.
        """
        return self._score(X, None, sample_weight)

    def perplexity(self, X, sub_sampling=False):
        """Held-out perplexity by document completion, ``exp(-score / n_tokens)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts.

        sub_sampling : bool, default=False
            Accepted for compatibility with scikit-learn's
            ``LatentDirichletAllocation.perplexity``; it has no effect here
            (every document is scored).

        Returns
        -------
        perplexity : float
            Lower is better.
        """
        return self._perplexity(X, None)


def _prior_row(doc_topic_prior, n_components):
    """The document-topic prior as one (1, n_components) row."""
    return np.broadcast_to(
        np.asarray(doc_topic_prior, dtype=np.float64), (1, n_components)
    ).copy()
