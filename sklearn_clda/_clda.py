"""CompoundLDA: the compound latent Dirichlet allocation model."""

import time
import warnings
from numbers import Real

import numpy as np
from scipy.special import gammaln
from sklearn import get_config
from sklearn.base import _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from . import _memory, _sampling
from ._base import (
    _as_dtype,
    _BaseGibbsTopicModel,
    _csr_arrays,
    _output_dtype,
    concentration_interval,
)
from ._corpus import (
    StrictInterval,
    check_counts,
    check_group_labels,
    count_tokens,
    perplexity_of,
)
from ._fingerprint import data_fingerprint
from ._hyper import (
    count_histogram,
    doc_histograms,
    sample_alpha,
    update_concentration,
    update_symmetric,
)
from ._online import expected_table_sums, merge_labels, online_step
from ._mgs import MAX_STEP_SIZE, MIN_STEP_SIZE
from ._mh_sweeper import SAMPLER_CONSTRAINTS
from ._pi_update import PI_UPDATES
from ._vem import fit_vem
from .exceptions import ManyCollectionsWarning, UnseenCollectionWarning

__all__ = ["CompoundLDA"]

#: What a ``score`` or ``transform`` without groups advises, by whether
#: metadata routing is on.
_PASS_GROUPS = {
    False: "Pass groups (in a Pipeline, enable metadata routing with "
           "sklearn.set_config(enable_metadata_routing=True)).",
    True: "Pass groups (GridSearchCV and cross_validate over a Pipeline pass "
          "them to its score on scikit-learn 1.6 and 1.7 only with "
          "scoring=sklearn_clda.metrics.GroupsScorer()).",
}


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
        decide the collections' mixtures. Like every concentration here, it
        must lie in [1e-100, 1e10] (the samplers' arithmetic overflows or
        underflows beyond).

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
        MGS only: the initial Langevin step ``epsilon``, in [1e-8, 100].
        With ``alpha < 1``
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
        an EM iteration falls below ``tol`` (in [0, 1]).

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
        variational parameters), in [0, 1].

    sampler : {"auto", "dense", "sparse", "mh"}, default="auto"
        The z-step kernel of AGS and MGS (ignored by VEM). ``"dense"``
        draws each token's topic exactly from its full conditional, in
        time proportional to ``n_components``.
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
        Seeds every draw of the sampler. The same integer gives
        bit-identical results. See :term:`Glossary <random_state>`.

    warm_start : bool, default=False
        When True, ``fit`` keeps the chain's state, and the next ``fit`` on
        the same ``X`` and ``groups`` continues that chain for ``max_iter``
        more sweeps instead of starting a new one: two fits of 100 sweeps
        give the same result, bit for bit, as one of 200 (AGS and MGS).
        ``burn_in`` counts the sweeps of the whole chain and is fixed by its
        first fit, so the draws kept so far stay and every later sweep past
        burn-in (every ``thin``-th) adds to them; ``n_iter_`` counts all
        sweeps and ``trace_``, ``sweep_times_`` and
        ``collection_topic_samples_`` are extended. A different ``X`` or
        ``groups``, a changed model setting or burn-in raises
        ``ValueError``; ``random_state`` is not used again. ``n_jobs`` may
        change: the shards of another count get fresh streams seeded from
        the chain's. The kept state costs 4 bytes per token plus the sums
        of the kept samples, ``8 * n_components * (n_features + n_samples)``
        bytes.
        Not available with ``algorithm="vem"`` (``ValueError``).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Topic-word pseudo-counts ``m_kw + eta`` averaged over kept samples;
        normalize rows to get the topics ``beta_k``. float32 when fitted on
        float32 ``X``; an entry below float32's smallest positive number
        (an ``eta`` under about 1.4e-45) is stored as that number, so every
        entry stays positive.

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

    topic_word_prior_ : float
        The same as ``eta_``, under the name scikit-learn's LDA uses.

    doc_topic_prior_ : ndarray of shape (n_groups, n_components)
        Each collection's document-topic prior ``gamma_ * collection_topic_``
        (a view computed on access), under scikit-learn's LDA name.

    bound_ : float
        Training-set perplexity at the chain's last state (for VEM, at the
        variational means), ``exp(-sum_dw n_dw log(theta_d . phi_w) / N)``
        with the posterior means of ``theta`` and ``phi`` given the last
        topic assignments; scikit-learn's LDA reports its final training
        perplexity under this name. After ``partial_fit``: the perplexity of its
        batch, each piece scored under the topics before it was folded in.

    groups_ : ndarray of shape (n_groups,) or None
        The distinct collection labels seen in ``fit``, sorted. ``None``
        when fitted without ``groups`` (one collection).

    collection_sizes_ : ndarray of shape (n_groups,)
        Number of training documents in each collection (after
        ``partial_fit``, in all batches folded in).

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
        Per evaluation: ``"iteration"``, ``"log_likelihood"``, ``"seconds"``
        since sampling started, the current ``"alpha"``, ``"gamma"`` and
        ``"eta"`` (their path when learned) and, for MGS,
        ``"acceptance_rate"`` since the previous evaluation. After ``partial_fit``:
        ``"iteration"``, ``"log_likelihood"`` and ``"seconds"`` of each
        update of its call (the piece's log-likelihood, as in ``bound_``).

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
    fitted without ``groups`` ignores ``groups`` at inference, with a
    ``UserWarning``.

    **Many collections.** The cost of a sweep grows with the number of
    tokens plus collections x topics. More than one collection per five
    documents (and more than five) raises a
    :class:`~sklearn_clda.exceptions.ManyCollectionsWarning`: that is
    usually an id column passed as ``groups``.

    **Failed or interrupted fits** leave the estimator as it was before
    ``fit`` (previous fitted state, or unfitted): the fitted attributes are
    published together at the end. Ctrl-C during ``fit`` lands within one
    sweep and says so with a
    :class:`~sklearn_clda.exceptions.FitInterruptedWarning`; during
    ``transform``, ``score`` and ``perplexity`` it lands within
    milliseconds (the fold-in checks for it as it goes).

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

    **Streaming.** ``partial_fit(X, groups=g)`` updates the model with a
    batch by the online method of :class:`LDAGibbs` (SCVB0, whatever the
    ``algorithm``): each piece of about 50 documents gets expected topic
    counts under the current topics and mixtures. Each collection keeps
    the sum ``S_j`` of its documents' expected Antoniak table counts over
    the stream (weighted like the topic counts), and its mixture is the
    posterior mean of ``pi_j ~ Dirichlet(alpha + S_j)`` after every piece,
    so it uses all batches seen. A collection may first appear in any
    batch: ``groups_`` grows (sorted), its mixture starts from the
    size-weighted mean of the others, and ``collection_sizes_`` counts
    documents over all batches. ``collection_topic_samples_`` then holds
    the single estimate. On a model fitted by ``fit``, the stream starts
    from its topics, mixtures and table counts at the chain's last state.
    ``partial_fit`` requests ``groups`` like ``fit``.

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
    __metadata_request__partial_fit = {"groups": True}
    __metadata_request__transform = {"groups": True}
    __metadata_request__score = {"groups": True}

    _parameter_constraints: dict = {
        **_BaseGibbsTopicModel._parameter_constraints,
        **SAMPLER_CONSTRAINTS,
        "alpha": [concentration_interval()],
        "gamma": [None, concentration_interval()],
        "eta": [None, concentration_interval()],
        "algorithm": [StrOptions({"ags", "mgs", "vem"})],
        "tol": [StrictInterval(Real, 0, 1, closed="both")],
        "step_size": [StrictInterval(Real, MIN_STEP_SIZE, MAX_STEP_SIZE, closed="both")],
        "adapt_step_size": ["boolean"],
        "learn_priors": ["boolean", StrOptions({"eta", "gamma", "alpha"}), list, tuple],
    }

    _learnable_priors = ("eta", "gamma", "alpha")
    _default_learned_priors = ("eta", "gamma")

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
        sampler="auto",
        mh_steps=2,
        n_jobs=None,
        verbose=0,
        random_state=None,
        warm_start=False,
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
        self.sampler = sampler
        self.mh_steps = mh_steps
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state
        self.warm_start = warm_start

    # hooks -----------------------------------------------------------------
    def _initial_priors(self):
        """``(alpha, gamma, eta)`` as given, with the documented defaults."""
        K = self.n_components
        return (
            float(self.alpha),
            0.1 * K if self.gamma is None else float(self.gamma),
            1.0 / K if self.eta is None else float(self.eta),
        )

    def _start_run(self, run, n_features, n_groups):
        run.alpha, run.gamma, run.eta = self._initial_priors()
        # The chain starts from the uniform mixture (as in the paper's study).
        run.pi = np.full((n_groups, self.n_components), 1.0 / self.n_components)
        # VEM: only partial_fit starts a run, and its online method has no
        # pi update of a sampler.
        update = PI_UPDATES.get(self.algorithm)
        run.update = None if update is None else update(self, run)
        run.alpha_draws = []
        run.pi_samples = _KeptMixtures(n_groups, self.n_components)
        run.em_stats = {"cells": [], "topics": [], "docs": [], "lengths": []}

    def _draw_tables(self, run):
        return run.update.draw_tables

    def _sweep_prior(self, run):
        return run.gamma * run.pi

    def _eta_value(self, run):
        return run.eta

    def _after_sweep(self, run, sweep, tables, rng, state):
        run.pi = run.update.step(run, sweep, tables, rng, state)
        if "alpha" in run.learned:
            run.alpha, _ = sample_alpha(run.pi, run.alpha, rng)

    def _update_priors(self, run, state, update):
        stats, learned = run.em_stats, run.learned
        if "eta" in learned:
            stats["cells"].append(count_histogram(state.word_topic_counts().data))
            stats["topics"].append(count_histogram(state.nk))
        if "gamma" in learned:
            (jk, n, mult), lengths = doc_histograms(state, run.pi.shape[0])
            stats["docs"].append((jk, n, mult, run.pi.copy()))
            stats["lengths"].append(lengths)
        if not update:
            return
        if "eta" in learned:
            run.eta = update_symmetric(stats["cells"], stats["topics"], state.n_features, run.eta)
        if "gamma" in learned:
            run.gamma = update_concentration(stats["docs"], stats["lengths"], run.gamma)
        for v in stats.values():
            v.clear()

    def _trace_values(self, run):
        return {
            "alpha": run.alpha, "gamma": run.gamma, "eta": run.eta,
            **run.update.trace_values(),
        }

    def _log_prior_extra(self, run):
        K = self.n_components
        a = run.alpha
        n_groups = run.pi.shape[0]
        return float(
            n_groups * (gammaln(K * a) - K * gammaln(a)) + (a - 1.0) * np.log(run.pi).sum()
        )

    def _reserve_samples(self, run, n_kept):
        run.pi_samples.reserve(n_kept)

    def _keep_sample(self, run, state):
        run.pi_samples.append(run.pi)
        run.alpha_draws.append(run.alpha)

    def _kept_sample_bytes(self, n_groups, n_kept):
        return 8 * n_kept * n_groups * int(self.n_components)

    def _finish_run(self, run):
        samples = run.pi_samples.array()
        alpha = float(np.mean(run.alpha_draws)) if "alpha" in run.learned else run.alpha
        return {
            "collection_topic_samples_": samples,
            "collection_topic_": samples.mean(axis=0),
            "alpha_": alpha,
            "gamma_": run.gamma,
            "eta_": run.eta,
            **run.update.finish(),
        }

    def _final_state_extras(self, run, state):
        return {"_table_sums": expected_table_sums(
            state.ndk, self._sweep_prior(run), state.doc_group, run.pi.shape[0]
        )}

    def _after_online_step(self, run, doc_counts, log_none, doc_group):
        """The sub-batch's expected table counts join its collections' sums,
        and every mixture becomes its posterior mean given them.

        Each collection's sums take the online step on its own documents
        (a collection absent from the sub-batch keeps its sums), so a
        collection's first documents fade like the stream's first tokens,
        but its sums never fade while it gets no new documents.
        """
        prior = self._sweep_prior(run)
        docs = np.bincount(doc_group, minlength=prior.shape[0])
        keep, add = online_step(run.collection_docs, docs)
        tables = expected_table_sums(doc_counts, prior, doc_group, prior.shape[0], log_none)
        run.tables = keep[:, None] * run.tables + add[:, None] * tables
        run.collection_docs = run.collection_docs + docs
        weights = run.alpha + run.tables
        run.pi = weights / weights.sum(axis=1, keepdims=True)

    def _online_attributes(self, run):
        return {
            "collection_topic_": run.pi,
            "collection_topic_samples_": run.pi[None].copy(),
            "alpha_": run.alpha,
            "gamma_": run.gamma,
            "eta_": run.eta,
            "_table_sums": run.tables,
        }

    def _fitted_values(self):
        K = self.components_.shape[0]
        n_groups = 1 if self.groups_ is None else len(self.groups_)
        return (*((name, getattr(self, name), ((),), "positive")
                  for name in ("alpha_", "gamma_", "eta_")),
                ("collection_topic_", self.collection_topic_, ((n_groups, K),), "mixtures"),
                ("collection_sizes_", self.collection_sizes_, ((n_groups,),), "sizes"))

    def _inference_prior(self, groups, n_docs, method):
        prior = self.gamma_ * self.collection_topic_
        name = f"{type(self).__name__}.{method}"
        if self.groups_ is None:
            if groups is not None:
                check_group_labels(groups, n_docs, method=name)  # (wrong ones raise)
                warnings.warn(
                    f"{name} got groups, but the model was fitted without groups "
                    "(one collection); the labels are ignored.",
                    UnseenCollectionWarning,
                    stacklevel=3,
                )
            return prior, np.zeros(n_docs, dtype=np.int32)
        n_groups = len(self.groups_)
        weights = self.collection_sizes_ / self.collection_sizes_.sum()
        fallback = self.gamma_ * (weights @ self.collection_topic_)
        prior = np.vstack([prior, fallback])
        if groups is None:
            if n_groups > 1:
                warnings.warn(
                    f"{name} got groups=None but the model was fitted on "
                    f"{n_groups} collections; using the size-weighted mean "
                    "collection mixture as every document's prior. "
                    + _PASS_GROUPS[get_config()["enable_metadata_routing"]],
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

    # views for code written for scikit-learn's LDA ------------------------
    @property
    def topic_word_prior_(self):
        """The topic-word prior ``eta_`` under scikit-learn's LDA name."""
        check_is_fitted(self, "eta_")
        return self.eta_

    @property
    def doc_topic_prior_(self):
        """Each collection's document-topic prior ``gamma_ * collection_topic_``,
        shape (n_groups, n_components), under scikit-learn's LDA name."""
        check_is_fitted(self, "collection_topic_")
        return self.gamma_ * self.collection_topic_

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
            Not used, present for API consistency by convention. Given
            without ``groups`` it warns: collection labels go in ``groups``.

        groups : array-like of shape (n_samples,), default=None
            Collection label (str or int) of each document, e.g. a list,
            ndarray or pandas Series. ``None`` fits a single collection.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        warn_y_without_groups(y, groups, f"{type(self).__name__}.fit")
        with self._fit_transaction():
            dtype = _output_dtype(X)
            X = check_counts(self, X, reset=True, method="fit")
            self._check_common_params()
            self._learned_priors()
            labels, codes = _encode_groups(groups, X.shape[0])
            n_groups = 1 if labels is None else len(labels)
            _warn_many_collections(n_groups, X.shape[0])
            if self.algorithm == "vem":
                fitted = self._fit_vem(X, codes, n_groups)
                fitted["_data_fingerprint"] = data_fingerprint(X, codes, labels)
            else:
                fitted = self._fit_gibbs(X, codes, n_groups, labels, dtype)
            fitted["groups_"] = labels
            fitted["collection_sizes_"] = np.bincount(codes, minlength=n_groups)
            self._publish(_as_dtype(fitted, dtype))
        return self

    def _fit_vem(self, X, codes, n_groups):
        """Variational EM (the paper's Algorithm vem) instead of sampling;
        returns the fitted attributes."""
        if self.warm_start:
            raise ValueError(
                "CompoundLDA(algorithm='vem') does not support warm_start=True "
                "(it continues Gibbs chains); use algorithm='ags' or 'mgs'."
            )
        if count_tokens(X) == 0:
            raise ValueError(
                "X passed to CompoundLDA.fit contains no tokens (all counts are "
                "zero after rounding); a topic model needs words."
            )
        _memory.check_fit_memory(self, X.shape, _memory.vem_phases(
            *X.shape, int(self.n_components), self._previous_fit_bytes()))
        alpha, gamma, eta = self._initial_priors()
        start = time.perf_counter()
        result = fit_vem(
            X, codes, n_groups, int(self.n_components),
            alpha=alpha, gamma=gamma, eta=eta,
            max_iter=int(self.max_iter), tol=self.tol,
            max_e_step_iter=int(self.max_doc_update_iter), e_step_tol=self.mean_change_tol,
            learned=self._learned_priors(),
            # tau is held at its uniform start for 5 EM iterations so that the
            # topics separate before the collection mixtures sharpen; without it
            # about half of random starts lose a topic in every collection.
            tau_warmup=min(5, int(self.max_iter) - 1),
            random_state=self.random_state,
            verbose=self.verbose,
        )
        seconds = time.perf_counter() - start
        n_iter = int(result["n_iter"])
        elbo = np.asarray(result["elbo"], dtype=np.float64)
        if not result["converged"]:
            warnings.warn(
                f"CompoundLDA(algorithm='vem') stopped after max_iter={self.max_iter} "
                f"EM iterations before the bound converged (tol={self.tol}).",
                ConvergenceWarning,
            )
        # the topics' word distributions, (V, K), in one new table
        topic_word_t = result["topic_word"].T.copy(order="C")
        topic_word_t /= result["topic_word"].sum(axis=1)
        ll = np.empty(X.shape[0])
        _sampling.doc_log_likelihood(*_csr_arrays(X), result["doc_topic"], topic_word_t, ll)
        del topic_word_t
        return {
            "bound_": perplexity_of(ll.sum(), count_tokens(X)),
            "alpha_": float(result["alpha"]),
            "gamma_": float(result["gamma"]),
            "eta_": float(result["eta"]),
            "components_": np.ascontiguousarray(result["topic_word"], dtype=np.float64),
            "collection_topic_": result["collection_topic"],
            "collection_topic_samples_": result["collection_topic"][None].copy(),
            "doc_topic_": result["doc_topic"],
            "n_iter_": n_iter,
            "burn_in_": 0,
            "n_tokens_": count_tokens(X),
            "trace_": {
                "iteration": np.arange(1, elbo.shape[0] + 1, dtype=np.int64),
                "elbo": elbo,
            },
            "sweep_times_": np.full(n_iter, seconds / max(n_iter, 1)),
            "_table_sums": _vem_table_sums(X, codes, n_groups, result),
        }

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, groups=None):
        """Update the model with a batch of documents (streaming).

        Online stochastic collapsed variational Bayes (SCVB0; see
        Streaming in the Notes): the batch's documents are folded in piece
        by piece under the current topics and mixtures, which move towards
        them. Memory does not grow with the number of batches. On an
        unfitted estimator the first call starts the stream; on a fitted
        model it continues from the fitted topics and mixtures.

        The priors continue from the fitted model's (``alpha_``, ``gamma_``
        and ``eta_``): prior parameters changed with ``set_params`` since are
        not taken up; call ``fit`` to use them.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts of the batch, with the model's features. A
            batch without a single token (every document emptied by the
            vectorizer) is skipped with a ``UserWarning``, the model
            unchanged; a first batch needs tokens to start the model.

        y : Ignored
            Not used, present for API consistency by convention. Given
            without ``groups`` it warns: collection labels go in ``groups``.

        groups : array-like of shape (n_samples,), default=None
            Collection label of each document of the batch; labels not seen
            before add collections. Must be given in every batch if the
            model has collections, and never if it has none.

        Returns
        -------
        self : object
            The updated estimator. If the call fails or is interrupted, the
            estimator keeps its state from before the call.

        Examples
        --------
        >>> from sklearn_clda import CompoundLDA
        >>> from sklearn_clda.datasets import make_compound_corpus
        >>> corpus = make_compound_corpus(n_topics=3, n_features=40, n_collections=2,
        ...                               docs_per_collection=150, doc_length=60,
        ...                               random_state=0)
        >>> clda = CompoundLDA(n_components=3, random_state=0)
        >>> # Collection 1 first appears in the second batch.
        >>> for start in range(0, 300, 100):
        ...     batch = slice(start, start + 100)
        ...     clda = clda.partial_fit(corpus.data[batch], groups=corpus.groups[batch])
        >>> clda.groups_.tolist(), clda.collection_sizes_.tolist()
        ([0, 1], [150, 150])
        """
        warn_y_without_groups(y, groups, f"{type(self).__name__}.partial_fit")
        with self._fit_transaction("partial_fit"):
            dtype = _output_dtype(X)
            first = not hasattr(self, "components_")
            self._check_partial_fit(X)
            X = check_counts(self, X, reset=first, method="partial_fit")
            self._check_common_params()
            self._learned_priors()
            labels, old_rows, codes = self._batch_collections(groups, X.shape[0], first)
            if self._empty_batch(X, first):
                return self
            n_groups = 1 if labels is None else len(labels)
            carry = self._carry(old_rows, n_groups, first)
            fitted = self._partial_fit_online(X, codes, n_groups, carry)
            sizes = np.bincount(codes, minlength=n_groups)
            if not first:
                sizes[[0] if old_rows is None else old_rows] += self.collection_sizes_
            _warn_many_collections(n_groups, int(sizes.sum()), "partial_fit")
            fitted["groups_"] = labels
            fitted["collection_sizes_"] = sizes
            self._publish(_as_dtype(fitted, dtype))
        return self

    def _batch_collections(self, groups, n_docs, first):
        """``(labels, old_rows, codes)`` of a batch: the model's labels merged
        with the batch's, the new row of each old collection and each
        document's collection."""
        old = None if first else self.groups_
        if groups is None:
            if old is not None:
                raise ValueError(
                    f"CompoundLDA.partial_fit got groups=None, but the model has "
                    f"{len(old)} collections; pass the collection label of each "
                    "document of every batch."
                )
            return None, None, np.zeros(n_docs, dtype=np.int32)
        if not first and old is None:
            raise ValueError(
                "CompoundLDA.partial_fit got groups, but the model was fitted "
                "without groups (one collection); start a new model and pass "
                "groups from its first batch on."
            )
        batch = check_group_labels(groups, n_docs, method="CompoundLDA.partial_fit")
        return merge_labels(old, batch)

    def _carry(self, old_rows, n_groups, first):
        """The run variables a batch takes over from the fitted model: the
        priors, the mixtures (a new collection starts from the size-weighted
        mean mixture), the collections' expected table counts and their
        numbers of documents so far."""
        tables = np.zeros((n_groups, self.n_components))
        docs = np.zeros(n_groups)
        if first:
            return {"tables": tables, "collection_docs": docs}
        rows = [0] if old_rows is None else old_rows
        docs[rows] = self.collection_sizes_
        old_pi = np.asarray(self.collection_topic_, dtype=np.float64)
        old_pi = old_pi / old_pi.sum(axis=1, keepdims=True)
        weights = self.collection_sizes_ / self.collection_sizes_.sum()
        pi = np.tile(weights @ old_pi, (n_groups, 1))
        pi[rows] = old_pi
        sums = getattr(self, "_table_sums", None)
        if sums is None:
            warnings.warn(
                "CompoundLDA.partial_fit: the model keeps no collection table "
                "counts (it was loaded from a file), so the collections' "
                "mixtures are learned from this batch on, starting from "
                "collection_topic_.",
                UserWarning,
                stacklevel=4,
            )
        else:
            tables[rows] = sums
        return {
            "alpha": float(self.alpha_), "gamma": float(self.gamma_),
            "eta": float(self.eta_), "pi": pi, "tables": tables, "collection_docs": docs,
        }

    def transform(self, X, groups=None, *, normalize=True):
        """Infer documents' topic proportions with topics and mixtures held fixed.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts.

        groups : array-like of shape (n_samples,), default=None
            Collection label of each document. See Notes in the class
            docstring for unseen labels and ``None``.

        normalize : bool, default=True
            Whether to normalize the rows. ``False`` returns the fold-in's
            pseudo-counts ``gamma * pi_j + expected topic counts`` (rows
            summing to ``gamma`` plus the document's length).

        Returns
        -------
        doc_topic_distr : ndarray of shape (n_samples, n_components)
            Topic proportions; rows sum to 1 when ``normalize``.
            Deterministic, row by row. In the model's dtype: float32 when
            it was fitted on float32 ``X``, else float64 (as scikit-learn's
            LDA).
        """
        return self._transform(X, groups, normalize=normalize)

    def fit_transform(self, X, y=None, groups=None, *, normalize=True):
        """Fit the model, then transform the training documents.

        Equal to ``fit(X, groups=groups).transform(X, groups=groups,
        normalize=normalize)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts.

        y : Ignored
            Not used, present for API consistency by convention. Given
            without ``groups`` it warns: collection labels go in ``groups``.

        groups : array-like of shape (n_samples,), default=None
            Collection label of each document.

        normalize : bool, default=True
            Whether to normalize the rows (see ``transform``).

        Returns
        -------
        doc_topic_distr : ndarray of shape (n_samples, n_components)
            Topic proportions; rows sum to 1 when ``normalize``.
        """
        warn_y_without_groups(y, groups, f"{type(self).__name__}.fit_transform")
        self._check_normalize(normalize, "fit_transform")
        return self.fit(X, groups=groups).transform(X, groups=groups, normalize=normalize)

    def score(self, X, y=None, groups=None, sample_weight=None):
        """Estimated held-out log-likelihood by document completion (higher is better).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts.

        y : Ignored
            Not used, present for API consistency by convention. Given
            without ``groups`` it warns: collection labels go in ``groups``.

        groups : array-like of shape (n_samples,), default=None
            Collection label of each document.

        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the documents' log-likelihoods.

        Returns
        -------
        score : float
            Sum over documents of the completion log-likelihood, in nats.
        """
        warn_y_without_groups(y, groups, f"{type(self).__name__}.score")
        return self._score(X, groups, sample_weight)

    def perplexity(self, X, groups=None, sub_sampling=False):
        """Held-out perplexity by document completion, ``exp(-score / n_tokens)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts.

        groups : array-like of shape (n_samples,), default=None
            Collection label of each document.

        sub_sampling : bool, default=False
            Accepted for compatibility with scikit-learn's
            ``LatentDirichletAllocation.perplexity``; no effect.

        Returns
        -------
        perplexity : float
            Lower is better.
        """
        return self._perplexity(X, groups)


def _vem_table_sums(X, codes, n_groups, result):
    """The collections' expected table counts at the variational solution,
    whose document-topic means are ``(gamma pi_j + m_jd) / (gamma + n_jd)``
    (``m_jd`` the expected topic counts)."""
    prior = result["gamma"] * result["collection_topic"]
    n_docs = np.asarray(X.sum(axis=1), dtype=np.float64).ravel()
    counts = np.maximum(
        result["doc_topic"] * (result["gamma"] + n_docs)[:, None] - prior[codes], 0.0
    )
    # Without the token-level responsibilities, a Poisson count stands in
    # for the probability that a document has no token of a topic.
    return expected_table_sums(counts, prior, codes, n_groups, log_none=-counts)


def _encode_groups(groups, n_docs):
    """``(labels, codes)``: the sorted distinct collection labels (``None``
    without groups) and each document's collection index."""
    if groups is None:
        return None, np.zeros(n_docs, dtype=np.int32)
    labels = check_group_labels(groups, n_docs, method="CompoundLDA.fit")
    labels, codes = np.unique(labels, return_inverse=True)
    return labels, codes.astype(np.int32).ravel()


def too_many_collections(n_groups, n_docs):
    """More than one collection per five documents (and more than five) is
    almost always a per-document column passed as the collection label."""
    return n_groups > max(5, n_docs / 5)


def warn_y_without_groups(y, groups, caller):
    """Warn when ``y`` is given without ``groups``: most likely the
    collection labels, passed in ``y``'s place (``fit(X, labels)``)."""
    if y is not None and groups is None:
        warnings.warn(
            f"{caller} got y but no groups: y is ignored and the documents are "
            "fitted as one collection. Pass the collection labels by keyword, "
            f"{caller.rsplit('.', 1)[-1]}(X, groups=labels).",
            UserWarning,
            stacklevel=3,
        )


def _warn_many_collections(n_groups, n_docs, method="fit"):
    if too_many_collections(n_groups, n_docs):
        warnings.warn(
            f"CompoundLDA.{method} got {n_groups} collections for {n_docs} documents "
            "(more than one per five documents); did you pass an id column as "
            "groups? Each collection's mixture is then estimated from very few "
            "documents.",
            ManyCollectionsWarning,
            stacklevel=4,
        )


class _KeptMixtures:
    """The collections' mixtures at a chain's kept samples, each written
    into its row of one array reserved for them, so that the fitted
    ``collection_topic_samples_`` is that array (stacking a list of draws
    at the end would hold every draw twice: with an id column as the
    collections, the draws outweigh the topics)."""

    def __init__(self, n_groups, n_components):
        self.rows = np.empty((0, n_groups, int(n_components)))
        self.n = 0

    @property
    def nbytes(self):
        return self.rows.nbytes

    def reserve(self, n_more):
        """Room for ``n_more`` more draws (a call's kept sweeps)."""
        need = self.n + n_more
        if need > self.rows.shape[0]:
            rows = np.empty((need, *self.rows.shape[1:]))
            rows[: self.n] = self.rows[: self.n]
            self.rows = rows

    def append(self, pi):
        if self.n == self.rows.shape[0]:
            self.reserve(max(1, self.n))
        self.rows[self.n] = pi
        self.n += 1

    def array(self):
        """The kept draws, ``(n_kept, n_groups, n_components)``: the reserved
        array itself once every row is filled."""
        return self.rows if self.n == self.rows.shape[0] else self.rows[: self.n].copy()
