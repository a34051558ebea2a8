"""CompoundLDA and LDAGibbs fitted on a Dask cluster."""

from sklearn.base import _fit_context

from .. import _clda, _lda_gibbs
from ._fit import DistributedFitMixin

__all__ = ["CompoundLDA", "LDAGibbs"]

_COMMON_DOC = """
    The fit runs on a Dask cluster: the documents are cut into one shard
    per worker, and each shard lives on its worker for the whole fit
    (tokens, topic assignments, document-topic counts and a copy of the
    word-topic table). Each round, every worker runs ``local_sweeps``
    collapsed Gibbs sweeps of its documents against its copy of the table;
    the client then adds up the workers' changes of the table (sparse, only
    the rows their words touch), sends the sum back with the next round,
    and updates the collection-level variables and learned priors with the
    same code as the in-memory estimator. This is approximate distributed
    LDA (AD-LDA, Newman et al. 2009) across workers; see the Dask page of
    the user guide for the approximation, its measured effect on
    perplexity, and what happens when a worker dies.

    The fitted estimator is an ordinary one: ``transform``, ``score`` and
    ``perplexity`` run in this process on in-memory data, it pickles (a
    ``Client`` given as ``client`` is not pickled), and :meth:`to_local`
    returns the in-memory class.
"""

_DASK_PARAMS_DOC = """
    client : distributed.Client, str or None, default=None
        The cluster to fit on: a client, a scheduler address, or ``None``
        for the current client (``distributed.Client.current()``) or, when
        there is none, a ``LocalCluster`` with one worker process that has a
        thread per CPU, started for the fit and closed after it. One shard
        per worker: the number of workers (and the input's row chunks)
        decides the result together with ``random_state`` and the shards'
        threads (``worker_threads``).

    local_sweeps : int, default=1
        Sweeps each worker runs against its own copy of the word-topic
        table between two synchronizations (its staleness). With ``1``
        every round is one sweep, the same AD-LDA scheme as ``n_jobs``
        threads. Larger values send fewer messages but let the copies
        drift apart. ``max_iter``, ``burn_in``, ``thin``,
        ``prior_update_every`` and ``evaluate_every`` count rounds, and the
        collection-level variables are updated once per round.

    worker_threads : int or None, default=None
        Threads each worker runs its shard's sweeps on; ``None`` takes the
        thread count of the worker (its ``nthreads``, as ``dask worker
        --nthreads`` or ``LocalCluster(threads_per_worker=...)`` set it).
        With more than one, a shard's sweep is partitioned as the in-memory
        estimator's is with ``n_jobs`` (its documents and words cut into
        that many blocks; nothing copied or merged), so the threads share
        the worker's one copy of the word-topic table: one worker process
        per machine with a thread per core holds one table per machine
        instead of one per process. The shard's tokens and topics are then
        kept in block order instead of document order (about the memory
        of one thread: the blocks' pieces add a few bytes per document and
        block). The
        result depends on each shard's count, as on ``n_jobs`` in memory,
        and is reproducible for given counts, number of workers and
        ``random_state``; a shard keeps the count it was first built with
        when it is rebuilt on another worker (``shard_threads_``).

    timeout : float, default=600.0
        Seconds that any one wait for the workers (building the shards, a
        round, an evaluation) may take before ``TimeoutError``. A worker
        that leaves the cluster is noticed within a fraction of a second
        and its shard rebuilt elsewhere, whatever the timeout.
"""


class CompoundLDA(DistributedFitMixin, _clda.CompoundLDA):
    __doc__ = """Compound LDA fitted on a Dask cluster.

    The same model, parameters and fitted attributes as
    :class:`sklearn_clda.CompoundLDA` (fitted by AGS only), with four more
    parameters.
""" + _COMMON_DOC + """
    Parameters
    ----------
    n_components, alpha, gamma, eta, learn_priors, prior_update_every, tol, max_iter, burn_in, thin, evaluate_every, max_doc_update_iter, mean_change_tol, n_jobs, verbose, random_state : see :class:`sklearn_clda.CompoundLDA`
        The same parameters with the same meanings (with
        ``local_sweeps > 1`` the schedule counts rounds). ``n_jobs`` sets
        the threads of ``transform``, ``score`` and ``perplexity``; the
        workers run their shards on ``worker_threads`` threads.

    algorithm : {"ags"}, default="ags"
        Only the augmented Gibbs sampler runs on a cluster (MGS's Langevin
        step and VEM need every document's counts in one place); other
        values raise ``ValueError`` at ``fit``.

    step_size, adapt_step_size : see :class:`sklearn_clda.CompoundLDA`
        MGS settings, accepted for a common parameter list; unused.

    sampler : {"auto", "dense"}, default="auto"
        The workers run the dense collapsed Gibbs kernel whatever the
        number of topics (``"auto"`` means ``"dense"`` here); ``"mh"`` and
        ``"sparse"`` raise ``ValueError`` at ``fit``. Fit the in-memory
        estimator for the Metropolis-Hastings samplers of many topics.

    mh_steps : int, default=2
        Accepted for a common parameter list; unused.

    warm_start : bool, default=False
        Must be ``False``: the chain's state lives on the workers only
        during the fit.
""" + _DASK_PARAMS_DOC + """
    Attributes
    ----------
    components_, collection_topic_, collection_topic_samples_, doc_topic_, topic_word_prior_, doc_topic_prior_, bound_, groups_, collection_sizes_, alpha_, gamma_, eta_, n_iter_, burn_in_, n_tokens_, sweep_times_, trace_, n_features_in_ : see :class:`sklearn_clda.CompoundLDA`
        The same fitted attributes (``doc_topic_`` is gathered from the
        workers at the end, in the rows' order).

    n_shards_ : int
        Number of shards (workers) of the fit.

    shard_threads_ : ndarray of shape (`n_shards_`,)
        Threads of each shard's sweep: ``worker_threads``, or the thread
        count of the worker that first built the shard (a shard is cut
        into at most that many blocks, fewer when it is small, as with
        ``n_jobs`` in memory).

    sync_bytes_ : ndarray of shape (`n_iter_`, 2)
        Bytes of array data sent to all shards and received from them in
        each round (table changes, priors, table counts, histograms).

    sync_seconds_ : ndarray of shape (`n_iter_`,)
        Each round's wall time less the slowest worker's own time: the
        cost of synchronization.

    rebuilt_shards_ : list of tuple
        ``(round, shard)`` of each shard rebuilt after its worker was lost
        (``round`` is ``"build"`` when lost while building); a shard whose
        new worker left too is rebuilt again and listed again.

    See Also
    --------
    sklearn_clda.CompoundLDA : The in-memory estimator.
    LDAGibbs : LDA on a Dask cluster.

    Examples
    --------
    >>> from distributed import Client, LocalCluster
    >>> from sklearn_clda.dask import CompoundLDA
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> corpus = make_compound_corpus(n_topics=3, n_features=40, n_collections=2,
    ...                               docs_per_collection=50, doc_length=100,
    ...                               random_state=0)
    >>> with LocalCluster(n_workers=2, processes=False, dashboard_address=None) as cluster, \\
    ...         Client(cluster) as client:
    ...     clda = CompoundLDA(n_components=3, max_iter=100, random_state=0)
    ...     clda = clda.fit(corpus.data, groups=corpus.groups)
    >>> clda.n_shards_, clda.collection_topic_.shape
    (2, (2, 3))
    >>> clda.to_local().transform(corpus.data[:4], groups=corpus.groups[:4]).shape
    (4, 3)
    """

    _parameter_constraints: dict = {
        **_clda.CompoundLDA._parameter_constraints,
        **DistributedFitMixin._dask_constraints,
    }
    _local_class = _clda.CompoundLDA
    _doc_prior_name = "gamma"
    _keeps_table_sums = True

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
        client=None,
        local_sweeps=1,
        worker_threads=None,
        timeout=600.0,
    ):
        super().__init__(
            n_components, alpha=alpha, gamma=gamma, eta=eta, algorithm=algorithm,
            step_size=step_size, adapt_step_size=adapt_step_size, learn_priors=learn_priors,
            prior_update_every=prior_update_every, tol=tol, max_iter=max_iter,
            burn_in=burn_in, thin=thin, evaluate_every=evaluate_every,
            max_doc_update_iter=max_doc_update_iter, mean_change_tol=mean_change_tol,
            sampler=sampler, mh_steps=mh_steps, n_jobs=n_jobs, verbose=verbose, random_state=random_state,
            warm_start=warm_start,
        )
        self.client = client
        self.local_sweeps = local_sweeps
        self.worker_threads = worker_threads
        self.timeout = timeout

    def _check_distributed(self, caller):
        super()._check_distributed(caller)
        if self.algorithm != "ags":
            raise ValueError(
                f"{caller} supports algorithm='ags' only, got {self.algorithm!r}; "
                "fit sklearn_clda.CompoundLDA in memory for MGS or VEM."
            )

    def _check_collections(self, n_groups, n_docs):
        _clda._warn_many_collections(n_groups, n_docs)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, groups=None):
        """Fit cLDA on the cluster with the augmented Gibbs sampler.

        Parameters
        ----------
        X : dask array, {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts: a dask array chunked by rows whose chunks
            are ``scipy.sparse`` CSR matrices of non-negative integer
            counts (e.g. from dask-ml's ``CountVectorizer`` or
            ``HashingVectorizer``), or in-memory counts as for
            :class:`sklearn_clda.CompoundLDA`, cut into shards here.

        y : Ignored
            Not used, present for API consistency by convention. Given
            without ``groups`` it warns: collection labels go in ``groups``.

        groups : dask array or Series, or array-like of shape (n_samples,), default=None
            Collection label (str or int) of each document: a dask array or
            Series with the same row chunks (partitions) as a dask ``X``,
            or an in-memory array-like. ``None`` fits a single collection.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        _clda.warn_y_without_groups(y, groups, f"{type(self).__name__}.fit")
        with self._fit_transaction():
            self._publish(self._fit_distributed(X, groups))
        return self


class LDAGibbs(DistributedFitMixin, _lda_gibbs.LDAGibbs):
    __doc__ = """LDA by collapsed Gibbs sampling on a Dask cluster.

    The same model, parameters and fitted attributes as
    :class:`sklearn_clda.LDAGibbs`, with four more parameters.
""" + _COMMON_DOC + """
    Parameters
    ----------
    n_components, doc_topic_prior, topic_word_prior, learn_priors, prior_update_every, max_iter, burn_in, thin, evaluate_every, max_doc_update_iter, mean_change_tol, n_jobs, verbose, random_state : see :class:`sklearn_clda.LDAGibbs`
        The same parameters with the same meanings (with
        ``local_sweeps > 1`` the schedule counts rounds). ``n_jobs`` sets
        the threads of ``transform``, ``score`` and ``perplexity``.

    sampler : {"auto", "dense"}, default="auto"
        The workers run the dense collapsed Gibbs kernel whatever the
        number of topics (``"auto"`` means ``"dense"`` here); ``"mh"`` and
        ``"sparse"`` raise ``ValueError`` at ``fit``. Fit the in-memory
        estimator for the Metropolis-Hastings samplers of many topics.

    mh_steps : int, default=2
        Accepted for a common parameter list; unused.

    warm_start : bool, default=False
        Must be ``False``: the chain's state lives on the workers only
        during the fit.
""" + _DASK_PARAMS_DOC + """
    Attributes
    ----------
    components_, doc_topic_, doc_topic_prior_, topic_word_prior_, bound_, n_iter_, burn_in_, n_tokens_, sweep_times_, trace_, n_features_in_ : see :class:`sklearn_clda.LDAGibbs`
        The same fitted attributes.

    n_shards_, shard_threads_, sync_bytes_, sync_seconds_, rebuilt_shards_ : see :class:`CompoundLDA`
        The shards, and the cost of their synchronization.

    See Also
    --------
    sklearn_clda.LDAGibbs : The in-memory estimator.
    CompoundLDA : Compound LDA on a Dask cluster.

    Examples
    --------
    >>> import dask.array as da
    >>> import scipy.sparse as sp
    >>> from distributed import Client, LocalCluster
    >>> from sklearn_clda.dask import LDAGibbs
    >>> from sklearn_clda.datasets import make_lda_corpus
    >>> corpus = make_lda_corpus(n_topics=3, n_features=30, n_samples=60,
    ...                          doc_length=50, random_state=0)
    >>> X = da.from_array(sp.csr_matrix(corpus.data), chunks=(20, -1), asarray=False)
    >>> with LocalCluster(n_workers=2, processes=False, dashboard_address=None) as cluster, \\
    ...         Client(cluster) as client:
    ...     lda = LDAGibbs(n_components=3, max_iter=100, random_state=0).fit(X)
    >>> lda.components_.shape, lda.doc_topic_.shape
    ((3, 30), (60, 3))
    """

    _parameter_constraints: dict = {
        **_lda_gibbs.LDAGibbs._parameter_constraints,
        **DistributedFitMixin._dask_constraints,
    }
    _local_class = _lda_gibbs.LDAGibbs
    _doc_prior_name = "doc_topic_prior"
    _keeps_table_sums = False

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
        client=None,
        local_sweeps=1,
        worker_threads=None,
        timeout=600.0,
    ):
        super().__init__(
            n_components, doc_topic_prior=doc_topic_prior, topic_word_prior=topic_word_prior,
            learn_priors=learn_priors, prior_update_every=prior_update_every,
            max_iter=max_iter, burn_in=burn_in, thin=thin, evaluate_every=evaluate_every,
            max_doc_update_iter=max_doc_update_iter, mean_change_tol=mean_change_tol,
            sampler=sampler, mh_steps=mh_steps, n_jobs=n_jobs, verbose=verbose, random_state=random_state,
            warm_start=warm_start,
        )
        self.client = client
        self.local_sweeps = local_sweeps
        self.worker_threads = worker_threads
        self.timeout = timeout

    def _check_collections(self, n_groups, n_docs):
        pass

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit LDA on the cluster by collapsed Gibbs sampling.

        Parameters
        ----------
        X : dask array, {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts: a dask array chunked by rows whose chunks
            are ``scipy.sparse`` CSR matrices of non-negative integer
            counts, or in-memory counts as for
            :class:`sklearn_clda.LDAGibbs`, cut into shards here.

        y : Ignored
            Not used, present for API consistency by convention.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        with self._fit_transaction():
            self._publish(self._fit_distributed(X, None))
        return self
