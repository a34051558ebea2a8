"""CompoundLDA: the compound latent Dirichlet allocation model."""

import time
import warnings
from numbers import Real

import numpy as np
from scipy.special import gammaln
from sklearn.base import _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import _BaseGibbsTopicModel
from ._corpus import check_counts, check_group_labels
from ._hyper import (
    count_histogram,
    group_topic_histogram,
    sample_alpha,
    update_concentration,
    update_symmetric,
)
from ._mgs import MMALAState
from ._vem import fit_vem
from .exceptions import UnseenCollectionWarning

__all__ = ["CompoundLDA"]

_TINY = np.finfo(np.float64).tiny


class CompoundLDA(_BaseGibbsTopicModel):
    """Compound latent Dirichlet allocation (cLDA) for corpora split into collections.

    cLDA learns one set of topics for the whole corpus and a topic mixture
    ``pi_j`` for every collection ``j`` (news outlet, year, star rating):
    documents of a collection draw their topic proportions around their
    collection's mixture. The generative model (the paper's eqs.
    cLDA-e..cLDA-a) is::

        beta_k   ~ Dirichlet_V(eta)              for each topic k
        pi_j     ~ Dirichlet_K(alpha)            for each collection j
        theta_jd ~ Dirichlet_K(gamma * pi_j)     for each document d of j
        z_jdi    ~ Categorical(theta_jd),  w_jdi ~ Categorical(beta_{z_jdi})

    It is fitted with the augmented Gibbs sampler AGS (Algorithm
    gibbs-aux-pi-z): a collapsed Gibbs sweep over the topic assignments
    ``z`` given ``pi`` (eq. posterior-z), then exact Antoniak draws of the
    table counts ``s_jdk`` and ``pi_j ~ Dirichlet(alpha + sum_d s_jdk)``
    (eq. aux-pi), every sweep.

    Parameters
    ----------
    n_components : int, default=10
        Number of topics ``K``.

    alpha : float, default=1.0
        Symmetric Dirichlet concentration of the collection mixtures
        ``pi_j``. The default (uniform over the simplex) lets the data
        decide the collections' mixtures.

    gamma : float, default=None
        Concentration of the documents' topic proportions around their
        collection's mixture: ``theta_jd ~ Dirichlet(gamma * pi_j)``.
        ``None`` means ``0.1 * n_components``, the same total prior mass per
        document as LDA with ``doc_topic_prior=0.1`` and in line with the
        values the paper learns (2.07 at K=30, 3.44 at K=40, 6.72 at K=90,
        i.e. 0.07-0.09 K). On 16-newsgroups at K=30 a prototype measured
        that ``gamma=1`` only ties LDA with ``doc_topic_prior=0.1`` (and
        loses by 4% on short documents) while ``gamma=3`` wins by 5-6% on
        both; small values starve short documents of prior mass.

    eta : float, default=None
        Symmetric Dirichlet concentration of the topic-word distributions.
        ``None`` means ``1 / n_components``.

    algorithm : {"ags", "mgs", "vem"}, default="ags"
        Inference algorithm. ``"ags"``: the augmented Gibbs sampler, exact
        Antoniak table counts and ``pi_j ~ Dirichlet(alpha + sum_d s_jdk)``
        (Algorithm gibbs-aux-pi-z), the paper's recommended chain.
        ``"mgs"``: the same z-sweep with one Riemann-manifold MALA proposal
        per collection on the reparametrization ``pi_j = |varphi_j| / sum
        |varphi_j|`` with metric ``diag(|varphi_j|)^-1`` (Algorithm
        gibbs-mmala-pi-z); both chains leave the same posterior invariant
        and AGS mixes faster. ``"vem"``: variational EM (Algorithm vem),
        a deterministic optimization of a lower bound (recorded in
        ``trace_["elbo"]``); fast per iteration but prone to local optima
        and biased estimates of ``pi`` (the paper's VEM lands 0.08 and 0.18
        from the true mixtures where AGS lands within 0.003 and 0.07).

    step_size : float, default=0.02
        MGS only: the initial Langevin step ``epsilon``. With ``alpha < 1``
        the target density is unbounded where the total mass
        ``sum_k |varphi_jk|`` approaches 0 and the MMALA chain can stall
        there for thousands of sweeps (still correct, but slow to mix);
        prefer AGS, or ``alpha >= 1``, in that case.

    adapt_step_size : bool, default=True
        MGS only: during burn-in, tune each collection's step towards an
        acceptance rate of 0.574 (Robbins-Monro on ``log epsilon``); the
        steps are fixed afterwards, so the kept draws come from a fixed
        Metropolis-Hastings kernel. The final steps are in ``step_size_``.

    learn_priors : bool, str or list of str, default=False
        Hyperparameters to learn. ``"eta"`` and ``"gamma"`` are estimated
        by Gibbs-EM (Minka fixed points, eqs. gem-est-eta and
        gem-est-gamma) every ``prior_update_every`` sweeps in the second
        half of burn-in and then held fixed; ``True`` means both.
        ``"alpha"`` is instead sampled every sweep under a Gamma(1, 1)
        prior (``alpha_`` is then the mean of the kept draws). With
        ``algorithm="vem"`` the named priors get the paper's Newton updates
        after every M-step instead. Learning
        ``eta`` helps on most corpora. Learning ``gamma`` helps when
        documents are long enough to inform their own proportions (tens
        of tokens or more, as in news16, where the paper learns 2.07 at
        K=30); on very short documents (a handful of tokens) it drifts low
        and hurts held-out perplexity, so keep the default ``0.1 * K``
        there.

    prior_update_every : int, default=10
        Sweeps between Gibbs-EM updates.

    tol : float, default=1e-6
        VEM only: stop when the relative increase of the lower bound over
        an EM iteration falls below ``tol``.

    max_iter : int, default=1000
        Number of Gibbs sweeps (each sweep redraws every ``z`` and every
        ``pi_j``); for VEM, the maximum number of EM iterations.

    burn_in : int, default=None
        Number of initial sweeps whose states are discarded; ``None`` means
        ``max_iter // 2``. ``pi`` is sampled from the first sweep on (from
        the uniform mixture), burn-in only decides which draws are kept.

    thin : int, default=10
        After burn-in every ``thin``-th state is kept.

    evaluate_every : int, default=-1
        Record ``log p(w, z | pi) + log p(pi | alpha)`` in ``trace_`` every
        ``evaluate_every`` sweeps (and at sweep 0); ``<= 0`` records only
        the last sweep.

    max_doc_update_iter : int, default=100
        Maximum fixed-point iterations per document in ``transform``,
        ``score`` and ``perplexity`` (and in each VEM E-step).

    mean_change_tol : float, default=1e-5
        Fold-in tolerance on the mean absolute change of a document's
        topic proportions (for the VEM E-step: relative to the mean of its
        variational parameters).

    n_jobs : int, default=None
        Number of threads. ``None`` means 1 and ``-1`` all processors.
        With more than one, each sweep runs approximate distributed Gibbs
        sampling (AD-LDA, Newman et al. 2009): documents are split into
        ``n_jobs`` shards of about equal token counts, each swept on its own
        thread against a private copy of the word-topic counts, merged
        after the sweep. Results are reproducible for a given ``n_jobs`` and
        ``random_state`` but differ between values of ``n_jobs``; only
        ``n_jobs=1`` is the exact serial sampler. ``transform``, ``score``
        and ``perplexity`` also use the threads (over documents; their
        results do not depend on ``n_jobs``).

    verbose : int, default=0
        If positive, show a progress bar over sweeps and print each
        evaluation.

    random_state : int, RandomState instance or None, default=None
        Seeds every draw of the sampler. The same integer gives
        bit-identical results. See :term:`Glossary <random_state>`.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Topic-word pseudo-counts ``m_kw + eta`` averaged over kept samples;
        normalize rows to get the topics ``beta_k``.

    collection_topic_ : ndarray of shape (n_groups, n_components)
        Posterior mean estimate of each collection's topic mixture
        ``pi_j`` (average of the kept draws); rows sum to 1 and follow
        ``groups_``.

    collection_topic_samples_ : ndarray of shape (n_samples_kept, n_groups, n_components)
        The kept draws of ``pi`` after burn-in and thinning, for trace
        plots and posterior intervals. For VEM, the single point estimate
        (``n_samples_kept = 1``).

    doc_topic_ : ndarray of shape (n_samples_fit, n_components)
        Training documents' topic proportions from the chain,
        ``(n_jdk + gamma pi_jk) / (n_jd + gamma)`` averaged over kept
        samples.

    groups_ : ndarray of shape (n_groups,) or None
        The distinct collection labels seen in ``fit``, sorted. ``None``
        when fitted without ``groups`` (one collection).

    collection_sizes_ : ndarray of shape (n_groups,)
        Number of training documents in each collection.

    alpha_ : float
        The collection-level concentration used.

    gamma_ : float
        The document-level concentration used.

    eta_ : float
        The topic-word prior used.

    acceptance_rate_ : float
        MGS only: the fraction of accepted MMALA proposals over the fit.

    step_size_ : ndarray of shape (n_groups,)
        MGS only: the final step of each collection.

    n_iter_ : int
        Number of sweeps run.

    burn_in_ : int
        Number of sweeps discarded before keeping samples.

    n_tokens_ : int
        Number of tokens in the training corpus.

    sweep_times_ : ndarray of shape (`n_iter_`,)
        Wall-clock seconds of each sweep (including the collection-level
        and prior updates, excluding log-likelihood evaluations);
        ``n_tokens_ / sweep_times_`` is the sampler's throughput.

    trace_ : dict of ndarray
        Per evaluation: ``"iteration"``, ``"log_likelihood"``, ``"seconds"``
        since sampling started, the current ``"alpha"``, ``"gamma"`` and
        ``"eta"`` (their path when learned) and, for MGS,
        ``"acceptance_rate"`` since the previous evaluation.

    n_features_in_ : int
        Number of features seen during :term:`fit`.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    LDAGibbs : LDA by collapsed Gibbs sampling (no collections).

    Notes
    -----
    **Collections at inference.** ``transform``, ``score`` and
    ``perplexity`` use the prior ``gamma * collection_topic_[j]`` of each
    document's collection. A label never seen in ``fit``, or
    ``groups=None`` on a model fitted with several collections, falls back
    to ``gamma`` times the mixture of the ``pi_j`` weighted by the number
    of training documents per collection, with an
    :class:`~sklearn_clda.exceptions.UnseenCollectionWarning`. A model
    fitted without ``groups`` ignores ``groups`` at inference.

    **Metadata routing.** ``fit``, ``transform`` and ``score`` request
    ``groups`` by default, so with
    ``sklearn.set_config(enable_metadata_routing=True)`` a
    ``Pipeline(CountVectorizer(), CompoundLDA())`` accepts
    ``.fit(texts, groups=g)``, ``.transform(texts, groups=g)`` and
    ``.score(texts, groups=g)``, and ``GridSearchCV(...).fit(texts,
    groups=g)`` routes each fold's labels to ``fit`` and ``score``. Without
    routing, use ``pipe.fit(texts, compoundlda__groups=g)``.

    ``transform`` and ``score`` are computed exactly as for
    :class:`LDAGibbs` (fold-in and document completion), so the two
    models' scores compare at equal ``n_components``.

    References
    ----------
    .. [1] C. P. George, W. Xia and G. Michailidis, "Analyses of
       Multi-collection Corpora via Compound Topic Modeling".

    Examples
    --------
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> corpus = make_compound_corpus(n_topics=3, n_features=40, n_collections=2,
    ...                               docs_per_collection=50, doc_length=100,
    ...                               random_state=0)
    >>> clda = CompoundLDA(n_components=3, max_iter=200, random_state=0)
    >>> clda.fit(corpus.data, groups=corpus.groups)
    CompoundLDA(max_iter=200, n_components=3, random_state=0)
    >>> clda.collection_topic_.shape
    (2, 3)
    >>> clda.transform(corpus.data[:4], groups=corpus.groups[:4]).shape
    (4, 3)
    """

    __metadata_request__fit = {"groups": True}
    __metadata_request__transform = {"groups": True}
    __metadata_request__score = {"groups": True}

    _parameter_constraints: dict = {
        **_BaseGibbsTopicModel._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "gamma": [None, Interval(Real, 0, None, closed="neither")],
        "eta": [None, Interval(Real, 0, None, closed="neither")],
        "algorithm": [StrOptions({"ags", "mgs", "vem"})],
        "tol": [Interval(Real, 0, None, closed="left")],
        "step_size": [Interval(Real, 0, None, closed="neither")],
        "adapt_step_size": ["boolean"],
        "learn_priors": ["boolean", StrOptions({"eta", "gamma", "alpha"}), list, tuple],
    }

    _learnable_priors = ("eta", "gamma", "alpha")
    _default_learned_priors = ("eta", "gamma")

    @property
    def _draw_tables(self):
        return self.algorithm == "ags"

    def __init__(
        self,
        n_components=10,
        *,
        alpha=1.0,
        gamma=None,
        eta=None,
        algorithm="ags",
        step_size=0.02,
        adapt_step_size=True,
        learn_priors=False,
        prior_update_every=10,
        tol=1e-6,
        max_iter=1000,
        burn_in=None,
        thin=10,
        evaluate_every=-1,
        max_doc_update_iter=100,
        mean_change_tol=1e-5,
        n_jobs=None,
        verbose=0,
        random_state=None,
    ):
        self.n_components = n_components
        self.alpha = alpha
        self.gamma = gamma
        self.eta = eta
        self.algorithm = algorithm
        self.step_size = step_size
        self.adapt_step_size = adapt_step_size
        self.learn_priors = learn_priors
        self.prior_update_every = prior_update_every
        self.tol = tol
        self.max_iter = max_iter
        self.burn_in = burn_in
        self.thin = thin
        self.evaluate_every = evaluate_every
        self.max_doc_update_iter = max_doc_update_iter
        self.mean_change_tol = mean_change_tol
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state

    # hooks -----------------------------------------------------------------
    def _init_priors(self, n_features, n_groups):
        K = self.n_components
        self.alpha_ = float(self.alpha)
        self.gamma_ = 0.1 * K if self.gamma is None else float(self.gamma)
        self.eta_ = 1.0 / K if self.eta is None else float(self.eta)
        # The chain starts from the uniform mixture (as in the paper's study).
        self._pi = np.full((n_groups, K), 1.0 / K)
        self._mmala = (
            MMALAState(self._pi, self.alpha_, self.step_size)
            if self.algorithm == "mgs" else None
        )
        self._sweeps_done = 0
        self._mh_window = [0, 0]  # MMALA proposals and acceptances since last record
        self._sample_alpha = "alpha" in self._learned_priors()
        self._alpha_draws = []
        self._em_stats = {"cells": [], "topics": [], "docs": [], "lengths": []}

    def _sweep_prior(self):
        return self.gamma_ * self._pi

    def _eta_value(self):
        return self.eta_

    def _after_sweep(self, tables, rng, state):
        if self.algorithm == "ags":
            # pi_j ~ Dir(alpha + sum_d s_jdk) via normalized Gamma draws. A
            # draw below the smallest normal double is floored there so that
            # every prior weight stays positive.
            draws = rng.standard_gamma(self.alpha_ + tables)
            np.maximum(draws, _TINY, out=draws)
            self._pi = draws / draws.sum(axis=1, keepdims=True)
        else:
            before = self._mmala.n_accepted
            self._sweeps_done += 1
            pi = self._mmala.step(
                state.ndk, state.doc_group, self.alpha_, self.gamma_, rng,
                adapt=self.adapt_step_size and self._sweeps_done <= self.burn_in_,
            )
            np.maximum(pi, _TINY, out=pi)
            self._pi = pi / pi.sum(axis=1, keepdims=True)
            self._mh_window[0] += self._pi.shape[0]
            self._mh_window[1] += self._mmala.n_accepted - before
        if self._sample_alpha:
            self.alpha_, _ = sample_alpha(self._pi, self.alpha_, rng)

    def _update_priors(self, state, learned, update):
        stats = self._em_stats
        if "eta" in learned:
            stats["cells"].append(count_histogram(state.nwk))
            stats["topics"].append(count_histogram(state.nk))
        if "gamma" in learned:
            jk, n, mult = group_topic_histogram(state.ndk, state.doc_group, self._pi.shape[0])
            stats["docs"].append((jk, n, mult, self._pi.copy()))
            stats["lengths"].append(count_histogram(state.doc_len))
        if not update:
            return
        if "eta" in learned:
            self.eta_ = update_symmetric(
                stats["cells"], stats["topics"], state.nwk.shape[0], self.eta_
            )
        if "gamma" in learned:
            self.gamma_ = update_concentration(stats["docs"], stats["lengths"], self.gamma_)
        for v in stats.values():
            v.clear()

    def _trace_values(self):
        values = {"alpha": self.alpha_, "gamma": self.gamma_, "eta": self.eta_}
        if self.algorithm == "mgs":
            proposed, accepted = self._mh_window
            values["acceptance_rate"] = accepted / proposed if proposed else np.nan
            self._mh_window = [0, 0]
        return values

    def _log_prior_extra(self):
        K = self.n_components
        a = self.alpha_
        n_groups = self._pi.shape[0]
        return float(
            n_groups * (gammaln(K * a) - K * gammaln(a))
            + (a - 1.0) * np.log(self._pi).sum()
        )

    def _start_samples(self, n_docs):
        super()._start_samples(n_docs)
        self._pi_samples = []

    def _keep_sample(self, state):
        super()._keep_sample(state)
        self._pi_samples.append(self._pi.copy())
        self._alpha_draws.append(self.alpha_)

    def _finish_samples(self):
        super()._finish_samples()
        self.collection_topic_samples_ = np.stack(self._pi_samples)
        self.collection_topic_ = self.collection_topic_samples_.mean(axis=0)
        if self._sample_alpha:
            self.alpha_ = float(np.mean(self._alpha_draws))
        if self._mmala is not None:
            self.acceptance_rate_ = self._mmala.n_accepted / max(self._mmala.n_proposed, 1)
            self.step_size_ = self._mmala.step_size
        del self._pi_samples, self._pi, self._mmala, self._mh_window, self._sweeps_done
        del self._sample_alpha, self._alpha_draws, self._em_stats

    def _inference_prior(self, groups, n_docs, method):
        prior = self.gamma_ * self.collection_topic_
        if self.groups_ is None:
            return prior, np.zeros(n_docs, dtype=np.int32)
        n_groups = len(self.groups_)
        weights = self.collection_sizes_ / self.collection_sizes_.sum()
        fallback = self.gamma_ * (weights @ self.collection_topic_)
        prior = np.vstack([prior, fallback])
        name = f"{type(self).__name__}.{method}"
        if groups is None:
            if n_groups > 1:
                warnings.warn(
                    f"{name} got groups=None but the model was fitted on "
                    f"{n_groups} collections; using the size-weighted mean "
                    "collection mixture as every document's prior. Pass "
                    "groups (in a Pipeline, enable metadata routing with "
                    "sklearn.set_config(enable_metadata_routing=True)).",
                    UnseenCollectionWarning,
                    stacklevel=3,
                )
                return prior, np.full(n_docs, n_groups, dtype=np.int32)
            return prior, np.zeros(n_docs, dtype=np.int32)
        labels = check_group_labels(groups, n_docs, method=name)
        rows = np.full(n_docs, n_groups, dtype=np.int32)
        if labels.dtype.kind == self.groups_.dtype.kind and n_docs:
            pos = np.searchsorted(self.groups_, labels)
            pos_clipped = np.minimum(pos, n_groups - 1)
            found = self.groups_[pos_clipped] == labels
            rows[found] = pos_clipped[found]
        unseen = np.unique(labels[rows == n_groups])
        if unseen.size:
            shown = ", ".join(repr(v) for v in unseen[:5].tolist())
            more = f" and {unseen.size - 5} more" if unseen.size > 5 else ""
            warnings.warn(
                f"{name} got collection labels not seen in fit ({shown}{more}); "
                "their documents use the size-weighted mean collection "
                "mixture as prior.",
                UnseenCollectionWarning,
                stacklevel=3,
            )
        return prior, rows

    # public API ------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, groups=None):
        """Fit cLDA with the augmented Gibbs sampler.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts. Non-integer values are rounded with a
            warning; negative, NaN or infinite values raise ``ValueError``.

        y : Ignored
            Not used, present for API consistency by convention.

        groups : array-like of shape (n_samples,), default=None
            Collection label (str or int) of each document, e.g. a list,
            ndarray or pandas Series. ``None`` fits a single collection.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X = check_counts(self, X, reset=True, method="fit")
        if groups is None:
            self.groups_ = None
            codes = np.zeros(X.shape[0], dtype=np.int32)
        else:
            labels = check_group_labels(groups, X.shape[0], method="CompoundLDA.fit")
            self.groups_, codes = np.unique(labels, return_inverse=True)
            codes = codes.astype(np.int32).ravel()
        n_groups = 1 if self.groups_ is None else len(self.groups_)
        self.collection_sizes_ = np.bincount(codes, minlength=n_groups)
        if self.algorithm == "vem":
            return self._fit_vem(X, codes, n_groups)
        return self._fit_counts(X, codes, n_groups)

    def _fit_vem(self, X, codes, n_groups):
        """Variational EM (the paper's Algorithm vem) instead of sampling."""
        if X.data.sum() == 0:
            raise ValueError(
                "X passed to CompoundLDA.fit contains no tokens (all counts are "
                "zero after rounding); a topic model needs words."
            )
        K = self.n_components
        learned = self._learned_priors()
        start = time.perf_counter()
        result = fit_vem(
            X, codes, n_groups, K,
            alpha=float(self.alpha),
            gamma=0.1 * K if self.gamma is None else float(self.gamma),
            eta=1.0 / K if self.eta is None else float(self.eta),
            max_iter=self.max_iter, tol=self.tol,
            max_e_step_iter=self.max_doc_update_iter, e_step_tol=self.mean_change_tol,
            learn_priors=learned,
            # tau is held at its uniform start for 5 EM iterations so that the
            # topics separate before the collection mixtures sharpen; without it
            # about half of random starts lose a topic in every collection.
            tau_warmup=min(5, self.max_iter - 1),
            random_state=self.random_state,
            verbose=self.verbose,
        )
        seconds = time.perf_counter() - start
        self.alpha_ = float(result["alpha"])
        self.gamma_ = float(result["gamma"])
        self.eta_ = float(result["eta"])
        self.components_ = np.ascontiguousarray(result["topic_word"], dtype=np.float64)
        self.collection_topic_ = result["collection_topic"]
        self.collection_topic_samples_ = self.collection_topic_[None].copy()
        self.doc_topic_ = result["doc_topic"]
        self.n_iter_ = int(result["n_iter"])
        self.burn_in_ = 0
        self.n_tokens_ = int(X.data.sum())
        elbo = np.asarray(result["elbo"], dtype=np.float64)
        self.trace_ = {
            "iteration": np.arange(1, elbo.shape[0] + 1, dtype=np.int64),
            "elbo": elbo,
        }
        self.sweep_times_ = np.full(self.n_iter_, seconds / max(self.n_iter_, 1))
        if not result["converged"]:
            warnings.warn(
                f"CompoundLDA(algorithm='vem') stopped after max_iter={self.max_iter} "
                f"EM iterations before the bound converged (tol={self.tol}).",
                ConvergenceWarning,
            )
        return self

    def transform(self, X, groups=None):
        """Infer documents' topic proportions with topics and mixtures held fixed.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts.

        groups : array-like of shape (n_samples,), default=None
            Collection label of each document. See Notes in the class
            docstring for unseen labels and ``None``.

        Returns
        -------
        doc_topic_distr : ndarray of shape (n_samples, n_components)
            Topic proportions; rows sum to 1. Deterministic, row by row.
        """
        return self._transform(X, groups)

    def fit_transform(self, X, y=None, groups=None):
        """Fit the model, then transform the training documents.

        Equal to ``fit(X, groups=groups).transform(X, groups=groups)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts.

        y : Ignored
            Not used, present for API consistency by convention.

        groups : array-like of shape (n_samples,), default=None
            Collection label of each document.

        Returns
        -------
        doc_topic_distr : ndarray of shape (n_samples, n_components)
            Topic proportions; rows sum to 1.
        """
        return self.fit(X, groups=groups).transform(X, groups=groups)

    def score(self, X, y=None, groups=None, sample_weight=None):
        """Estimated held-out log-likelihood by document completion (higher is better).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts.

        y : Ignored
            Not used, present for API consistency by convention.

        groups : array-like of shape (n_samples,), default=None
            Collection label of each document.

        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the documents' log-likelihoods.

        Returns
        -------
        score : float
            Sum over documents of the completion log-likelihood, in nats.
        """
        return self._score(X, groups, sample_weight)

    def perplexity(self, X, groups=None):
        """Held-out perplexity by document completion, ``exp(-score / n_tokens)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts.

        groups : array-like of shape (n_samples,), default=None
            Collection label of each document.

        Returns
        -------
        perplexity : float
            Lower is better.
        """
        return self._perplexity(X, groups)
