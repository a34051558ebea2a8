"""Shared machinery of the Gibbs-sampled topic models.

:class:`_BaseGibbsTopicModel` owns the sampling loop, the fold-in
inference behind ``transform``, the document-completion ``score`` and the
trace. Subclasses (:class:`~sklearn_clda.LDAGibbs`,
:class:`~sklearn_clda.CompoundLDA`) supply the priors through a few hooks:

- ``_init_priors(n_features, n_groups)``: resolve and store the fitted
  prior attributes before sampling;
- ``_sweep_prior()``: the ``(n_groups, n_components)`` document-topic
  Dirichlet parameter used by the next sweep;
- ``_draw_tables``: whether the sweep draws Antoniak table counts;
- ``_after_sweep(tables, rng, state)``: update collection-level state
  (AGS or MGS draws of ``pi``);
- ``_update_priors(state, learned, update)``: Gibbs-EM, collecting each
  sweep's statistics and running the M-step when ``update``;
- ``_trace_values()``: prior values and sampler statistics for ``trace_``;
- ``_start_samples`` / ``_keep_sample``/ ``_finish_samples``: accumulate
  the kept samples after burn-in;
- ``_inference_prior(groups, n_docs, method)``: the prior rows and the
  row index of each document for fold-in.
"""

import os
import time
from abc import ABCMeta, abstractmethod
from concurrent.futures import ThreadPoolExecutor
from numbers import Integral, Real

import numpy as np
from scipy.special import gammaln
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from . import _sampling
from ._corpus import check_counts, count_tokens, csr_to_tokens, split_alternate

__all__ = ["_BaseGibbsTopicModel"]


class _GibbsState:
    """Sampler state of one fit: token arrays and count tables (not kept after fit)."""

    def __init__(self, X, doc_group, n_components, rng):
        self.words, self.doc_ptr = csr_to_tokens(X)
        self.doc_group = np.ascontiguousarray(doc_group, dtype=np.int32)
        n_docs, n_features = X.shape
        K = n_components
        self.doc_len = np.diff(self.doc_ptr)
        doc_of_token = np.repeat(np.arange(n_docs, dtype=np.int64), self.doc_len)
        # Random initial assignments, uniform over topics.
        self.z = rng.integers(0, K, size=self.words.shape[0], dtype=np.int32)
        # Word-topic counts, rows padded with zero columns to a multiple of
        # eight topics and 64-byte aligned, the layout of the vectorized
        # kernel; ``nwk`` is the (n_features, K) view of it.
        K_pad = _sampling.padded_n_components(K)
        self.nwk_padded = _sampling._line_buffer(n_features * K_pad, np.int32).reshape(
            n_features, K_pad
        )
        self.nwk = self.nwk_padded[:, :K]
        self.nwk[...] = np.bincount(
            self.words.astype(np.int64) * K + self.z, minlength=n_features * K
        ).reshape(n_features, K)
        self.ndk = (
            np.bincount(doc_of_token * K + self.z, minlength=n_docs * K)
            .astype(np.int32)
            .reshape(n_docs, K)
        )
        self.nk = np.bincount(self.z, minlength=K).astype(np.int32)


def _private_copy(a):
    """Copy of ``a`` on cache lines of its own, for one thread to write.

    Small arrays such as the topic totals ``nk`` are otherwise allocated
    next to each other, and two threads updating neighbouring copies would
    keep invalidating each other's cache line (false sharing).
    """
    out = _sampling._line_buffer(a.size, a.dtype).reshape(a.shape)
    out[...] = a
    return out


def _effective_n_jobs(n_jobs):
    """Number of threads for ``n_jobs`` (``None`` -> 1, negative -> cores + 1 + n_jobs)."""
    if n_jobs is None:
        return 1
    if n_jobs == 0:
        raise ValueError("n_jobs == 0 has no meaning; use None or 1 for one thread.")
    if n_jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    return n_jobs


class _ShardedSweeper:
    """Runs Gibbs sweeps on one thread, or AD-LDA style on several.

    With one shard the kernel updates the shared counts in place and the
    chain is the exact serial collapsed Gibbs sampler. With ``n_shards > 1``
    the documents are split into contiguous shards of about equal token
    counts (approximate distributed LDA, Newman et al. 2009): each thread
    sweeps its shard against a private copy of the word-topic counts taken
    at the start of the sweep, with its own random stream, and the copies'
    changes are added up after the sweep. Document-topic counts are
    shard-local and need no merge. Results depend on ``n_shards`` but not on
    thread timing: shards, streams and the merge order are fixed.
    """

    def __init__(self, state, n_shards, seed_sequence, n_table_rows):
        self.state = state
        n_docs = state.doc_ptr.shape[0] - 1
        n_shards = max(1, min(n_shards, n_docs))
        K = state.nk.shape[0]
        if n_shards == 1:
            bounds = [0, n_docs]
        else:
            targets = np.linspace(0, state.doc_ptr[-1], n_shards + 1)[1:-1]
            cuts = np.searchsorted(state.doc_ptr, targets)
            bounds = [0, *np.unique(np.clip(cuts, 1, n_docs - 1)).tolist(), n_docs]
        self.shards = []
        streams = (
            [np.random.PCG64(seed_sequence)]
            if len(bounds) == 2
            else [np.random.PCG64(ss) for ss in seed_sequence.spawn(len(bounds) - 1)]
        )
        for (lo, hi), bitgen in zip(zip(bounds[:-1], bounds[1:]), streams):
            t0, t1 = state.doc_ptr[lo], state.doc_ptr[hi]
            self.shards.append(dict(
                words=state.words[t0:t1],
                doc_ptr=state.doc_ptr[lo : hi + 1] - t0,
                doc_group=state.doc_group[lo:hi],
                z=state.z[t0:t1],
                ndk=state.ndk[lo:hi],
                tables=np.zeros((n_table_rows, K), dtype=np.int64),
                bitgen=bitgen,
            ))
        # Each thread's private word-topic table and topic totals (reused every
        # sweep), and the row blocks in which the threads merge them.
        self.private = (
            [(_private_copy(state.nwk_padded), _private_copy(state.nk)) for _ in self.shards]
            if len(self.shards) > 1
            else []
        )
        n_rows = state.nwk_padded.shape[0]
        cuts = np.linspace(0, n_rows, len(self.shards) + 1).astype(int)
        self.merge_blocks = list(zip(cuts[:-1], cuts[1:]))
        self.pool = None

    def __enter__(self):
        if len(self.shards) > 1:
            self.pool = ThreadPoolExecutor(len(self.shards))
        return self

    def __exit__(self, *exc):
        if self.pool is not None:
            self.pool.shutdown()
            self.pool = None
        return False

    def _run(self, shard, nwk, nk, prior, eta):
        shard["tables"].fill(0)
        _sampling.gibbs_sweep(
            shard["words"], shard["doc_ptr"], shard["doc_group"], shard["z"],
            nwk, shard["ndk"], nk, prior, eta, shard["tables"], shard["bitgen"],
        )

    def _run_private(self, i, prior, eta):
        """Thread ``i``: copy the global counts into its own tables, sweep its shard."""
        nwk, nk = self.private[i]
        np.copyto(nwk, self.state.nwk_padded)
        np.copyto(nk, self.state.nk)
        self._run(self.shards[i], nwk, nk, prior, eta)

    def _merge_rows(self, lo, hi):
        """Global rows lo:hi become global + the sum of every thread's change."""
        glob = self.state.nwk_padded[lo:hi]
        acc = self.private[0][0][lo:hi]
        for nwk, _ in self.private[1:]:
            acc += nwk[lo:hi]
            acc -= glob
        glob[...] = acc

    def sweep(self, prior, eta):
        """One sweep over all documents; returns the summed Antoniak table counts."""
        st = self.state
        if len(self.shards) == 1:
            shard = self.shards[0]
            self._run(shard, st.nwk_padded, st.nk, prior, eta)
            return shard["tables"]
        for f in [self.pool.submit(self._run_private, i, prior, eta)
                  for i in range(len(self.shards))]:
            f.result()
        # Merge (integer sums, so the order does not matter), rows split
        # between the threads; numpy releases the GIL in these loops.
        for f in [self.pool.submit(self._merge_rows, lo, hi) for lo, hi in self.merge_blocks]:
            f.result()
        nk_new = self.private[0][1].copy()
        for _, nk in self.private[1:]:
            nk_new += nk
            nk_new -= st.nk
        st.nk[...] = nk_new
        return sum(shard["tables"] for shard in self.shards)


class _BaseGibbsTopicModel(
    ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator, metaclass=ABCMeta
):
    """Base class of the Gibbs-sampled topic models (not public)."""

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "burn_in": [None, Interval(Integral, 0, None, closed="left")],
        "thin": [Interval(Integral, 1, None, closed="left")],
        "evaluate_every": [Integral],
        "max_doc_update_iter": [Interval(Integral, 1, None, closed="left")],
        "mean_change_tol": [Interval(Real, 0, None, closed="left")],
        "prior_update_every": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [None, Integral],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    # Names accepted by ``learn_priors`` (subclasses override).
    _learnable_priors: tuple = ()
    # The subset of ``_learnable_priors`` that ``learn_priors=True`` means.
    _default_learned_priors: tuple = ()

    # ------------------------------------------------------------------ hooks
    _draw_tables = False

    def _learned_priors(self):
        """The set of prior names that ``learn_priors`` asks to learn."""
        value = self.learn_priors
        if value is False or value is None:
            return frozenset()
        if value is True:
            return frozenset(self._default_learned_priors)
        names = [value] if isinstance(value, str) else list(value)
        unknown = sorted(set(names) - set(self._learnable_priors))
        if unknown:
            raise ValueError(
                f"learn_priors got unknown name(s) {unknown}; choose from "
                f"{list(self._learnable_priors)}, or pass True or False."
            )
        return frozenset(names)

    def _update_priors(self, state, learned, update):
        """Gibbs-EM: collect this sweep's statistics; if ``update``, run the
        M-step over the samples collected since the previous one (subclasses).
        """

    def _trace_values(self):
        """Current prior values (and sampler statistics) recorded in ``trace_``."""
        return {}

    @abstractmethod
    def _init_priors(self, n_features, n_groups):
        """Resolve the priors into fitted attributes."""

    @abstractmethod
    def _sweep_prior(self):
        """Document-topic Dirichlet parameter per collection, (n_groups, K)."""

    def _after_sweep(self, tables, rng, state):
        """Update collection-level variables after a z-sweep (cLDA: pi)."""

    def _log_prior_extra(self):
        """Log density of sampled collection-level variables (cLDA: pi)."""
        return 0.0

    def _start_samples(self, n_docs):
        self._acc_nwk = None
        self._acc_doc_topic = None
        self._n_kept = 0

    def _keep_sample(self, state):
        prior = self._sweep_prior()
        doc_prior = prior[state.doc_group]
        theta = state.ndk + doc_prior
        theta /= theta.sum(axis=1, keepdims=True)
        if self._acc_nwk is None:
            self._acc_nwk = state.nwk.astype(np.float64)
            self._acc_doc_topic = theta
        else:
            self._acc_nwk += state.nwk
            self._acc_doc_topic += theta
        self._n_kept += 1

    def _finish_samples(self):
        n = self._n_kept
        self.components_ = np.ascontiguousarray((self._acc_nwk / n).T) + self._eta_value()
        self.doc_topic_ = self._acc_doc_topic / n
        del self._acc_nwk, self._acc_doc_topic, self._n_kept

    @abstractmethod
    def _eta_value(self):
        """The fitted symmetric topic-word prior."""

    @abstractmethod
    def _inference_prior(self, groups, n_docs, method):
        """Return ``(prior_rows, doc_rows)`` for fold-in inference."""

    # ---------------------------------------------------------------- fitting
    def _check_burn_in(self):
        burn_in = self.max_iter // 2 if self.burn_in is None else self.burn_in
        if burn_in >= self.max_iter:
            raise ValueError(
                f"burn_in={burn_in} must be smaller than max_iter={self.max_iter} "
                "so that at least one sample is kept."
            )
        return burn_in

    def _make_streams(self):
        """Independent generators for init, sweeps and collection-level draws."""
        rs = check_random_state(self.random_state)
        seed = np.random.SeedSequence(rs.randint(0, 2**31 - 1, size=4).tolist())
        init_ss, sweep_ss, global_ss = seed.spawn(3)
        return (
            np.random.Generator(np.random.PCG64(init_ss)),
            sweep_ss,
            np.random.Generator(np.random.PCG64(global_ss)),
        )

    def _fit_counts(self, X, doc_group, n_groups):
        """Run the sampler on a validated CSR count matrix."""
        burn_in = self._check_burn_in()
        if count_tokens(X) == 0:
            raise ValueError(
                f"X passed to {type(self).__name__}.fit contains no tokens (all "
                "counts are zero after rounding); a topic model needs words."
            )
        n_docs, n_features = X.shape
        K = self.n_components
        learned = self._learned_priors()
        # Gibbs-EM: in the second half of burn-in every sweep is an E-step
        # sample, and every prior_update_every sweeps an M-step maximizes
        # over the samples since the previous one; the priors are then
        # frozen so that every kept sample comes from the same posterior.
        update_sweeps = [
            it for it in range(burn_in // 2 + 1, burn_in + 1)
            if it % self.prior_update_every == 0
        ]
        if learned - {"alpha"} and not update_sweeps:
            raise ValueError(
                f"learn_priors={self.learn_priors!r} needs at least one update "
                f"sweep between burn_in // 2 and burn_in (={burn_in}) that is a "
                f"multiple of prior_update_every={self.prior_update_every}; "
                "increase burn_in or lower prior_update_every."
            )
        update_sweeps = frozenset(update_sweeps)
        learning = bool(learned - {"alpha"})
        init_rng, sweep_seed, global_rng = self._make_streams()
        self.burn_in_ = burn_in
        self._init_priors(n_features, n_groups)
        state = _GibbsState(X, doc_group, K, init_rng)
        sweeper = _ShardedSweeper(
            state, _effective_n_jobs(self.n_jobs), sweep_seed,
            n_groups if self._draw_tables else 0,
        )

        trace = {"iteration": [], "log_likelihood": [], "seconds": []}
        start = time.perf_counter()

        def record(iteration):
            ll = self._joint_log_likelihood(state)
            trace["iteration"].append(iteration)
            trace["log_likelihood"].append(ll)
            trace["seconds"].append(time.perf_counter() - start)
            for key, value in self._trace_values().items():
                trace.setdefault(key, []).append(value)
            if self.verbose:
                _progress_write(
                    f"iteration {iteration} of {self.max_iter}, log-likelihood {ll:.6e}"
                )

        evaluate = self.evaluate_every is not None and self.evaluate_every > 0
        if evaluate:
            record(0)
        self._start_samples(n_docs)
        sweep_times = np.zeros(self.max_iter)
        with _progress(self.max_iter, self.verbose, type(self).__name__) as bar, sweeper:
            for it in range(1, self.max_iter + 1):
                t0 = time.perf_counter()
                tables = sweeper.sweep(self._sweep_prior(), self._eta_value())
                self._after_sweep(tables, global_rng, state)
                if learning and burn_in // 2 < it <= burn_in:
                    self._update_priors(state, learned, it in update_sweeps)
                sweep_times[it - 1] = time.perf_counter() - t0
                if it > burn_in and (it - burn_in) % self.thin == 0:
                    self._keep_sample(state)
                if (evaluate and it % self.evaluate_every == 0) or it == self.max_iter:
                    record(it)
                bar.update(1)
        if self._n_kept == 0:  # burn_in + thin overshoots max_iter: keep the last state
            self._keep_sample(state)
        self._finish_samples()
        self.n_iter_ = self.max_iter
        self.burn_in_ = burn_in
        self.trace_ = {k: np.asarray(v) for k, v in trace.items()}
        self.trace_["iteration"] = self.trace_["iteration"].astype(np.int64)
        self.n_tokens_ = state.words.shape[0]
        self.sweep_times_ = sweep_times
        return self

    def _joint_log_likelihood(self, state):
        """log p(w, z) (and log p(pi | alpha) for cLDA) at the current state."""
        K = self.n_components
        eta = self._eta_value()
        V = state.nwk.shape[0]
        nz = state.nwk[state.nwk > 0]
        ll = K * gammaln(V * eta) - gammaln(state.nk + V * eta).sum()
        ll += (gammaln(nz + eta) - gammaln(eta)).sum()
        prior = self._sweep_prior()
        doc_prior = prior[state.doc_group]
        ll += (gammaln(doc_prior.sum(axis=1)) - gammaln(state.doc_len + doc_prior.sum(axis=1))).sum()
        mask = state.ndk > 0
        ll += (gammaln(state.ndk[mask] + doc_prior[mask]) - gammaln(doc_prior[mask])).sum()
        return float(ll + self._log_prior_extra())

    # -------------------------------------------------------------- inference
    def _topic_word(self):
        """Topic-word probabilities, word-major (n_features, n_components)."""
        phi = self.components_ / self.components_.sum(axis=1, keepdims=True)
        return np.ascontiguousarray(phi.T)

    def _chunks(self, n_docs):
        n_jobs = max(1, min(_effective_n_jobs(self.n_jobs), n_docs // 64 or 1))
        bounds = np.linspace(0, n_docs, n_jobs + 1).astype(int)
        return list(zip(bounds[:-1], bounds[1:]))

    def _fold_in(self, X, prior_rows, doc_rows, phi):
        """theta for each CSR row of X by the deterministic fold-in fixed point."""
        n_docs = X.shape[0]
        theta = np.empty((n_docs, self.n_components), dtype=np.float64)
        indptr, indices, data = _csr_arrays(X)
        prior_rows = np.ascontiguousarray(prior_rows, dtype=np.float64)
        doc_rows = np.ascontiguousarray(doc_rows, dtype=np.int32)

        def run(bounds):
            lo, hi = bounds
            a, b = indptr[lo], indptr[hi]
            _sampling.fold_in(
                indptr[lo : hi + 1] - a, indices[a:b], data[a:b], doc_rows[lo:hi],
                prior_rows, phi, self.max_doc_update_iter, self.mean_change_tol,
                theta[lo:hi],
            )

        chunks = self._chunks(n_docs)
        if len(chunks) == 1:
            run(chunks[0])
        else:
            with ThreadPoolExecutor(len(chunks)) as pool:
                list(pool.map(run, chunks))
        return theta

    def _transform(self, X, groups, method="transform"):
        check_is_fitted(self)
        X = check_counts(self, X, reset=False, method=method)
        prior_rows, doc_rows = self._inference_prior(groups, X.shape[0], method)
        return self._fold_in(X, prior_rows, doc_rows, self._topic_word())

    def _score_docs(self, X, groups, method):
        """Per-document completion log-likelihood and the number of tokens scored."""
        check_is_fitted(self)
        X = check_counts(self, X, reset=False, method=method)
        prior_rows, doc_rows = self._inference_prior(groups, X.shape[0], method)
        phi = self._topic_word()
        X_a, X_b = split_alternate(X)
        ll = np.zeros(X.shape[0])
        for observed, held_out in ((X_a, X_b), (X_b, X_a)):
            theta = self._fold_in(observed, prior_rows, doc_rows, phi)
            part = np.empty(X.shape[0])
            _sampling.doc_log_likelihood(*_csr_arrays(held_out), theta, phi, part)
            ll += part
        return ll, count_tokens(X)

    def _score(self, X, groups, sample_weight, method="score"):
        ll, _ = self._score_docs(X, groups, method)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X)
            return float(np.dot(sample_weight, ll))
        return float(ll.sum())

    def _perplexity(self, X, groups, method="perplexity"):
        ll, n_tokens = self._score_docs(X, groups, method)
        if n_tokens == 0:
            raise ValueError(
                f"X passed to {type(self).__name__}.{method} contains no tokens; "
                "perplexity is undefined."
            )
        return float(np.exp(-ll.sum() / n_tokens))

    # ------------------------------------------------------------------ misc
    @property
    def _n_features_out(self):
        """Number of transformed output features (topics)."""
        return self.components_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags


def _csr_arrays(X):
    """CSR arrays in the kernels' dtypes: indptr int64, indices int32, data float64."""
    return (
        np.ascontiguousarray(X.indptr, dtype=np.int64),
        np.ascontiguousarray(X.indices, dtype=np.int32),
        np.ascontiguousarray(X.data, dtype=np.float64),
    )


class _NoProgress:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n):
        pass


def _progress(total, verbose, name):
    """A tqdm progress bar over sweeps when ``verbose``, else a no-op."""
    if not verbose:
        return _NoProgress()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=f"{name} sweeps", unit="sweep", leave=False)


def _progress_write(message):
    from tqdm.auto import tqdm

    tqdm.write(message)
