"""The distributed fit shared by :class:`sklearn_clda.dask.CompoundLDA` and
:class:`sklearn_clda.dask.LDAGibbs`.

:class:`DistributedFitMixin` runs the in-memory estimators' own sampling loop
(``_BaseGibbsTopicModel._sample``) and hooks (``_start_run``,
``_sweep_prior``, ``_after_sweep``, ``_update_priors``, ...) on a
:class:`~sklearn_clda.dask._cluster.ClusterChain` instead of an in-memory
state, so that ``pi``, ``gamma`` and ``eta`` are updated on the client by
exactly the code of the in-memory estimators; only the z-sweeps, the
documents' statistics and the averaging of their proportions run on the
workers.
"""

import asyncio
import copy
import uuid
from numbers import Integral, Real

import numpy as np
from sklearn.base import _clone_parametrized
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.validation import check_is_fitted

from .. import _memory
from .._corpus import StrictInterval, perplexity_of
from .._base import _as_dtype, _output_dtype, _Trace, word_log_likelihood
from ._client import cluster_workers, fit_client
from ._cluster import ClusterChain, ShardSet
from ._input import shard_specs

__all__ = ["DistributedFitMixin"]

# Parameters of the distributed classes that the in-memory ones do not have.
_DASK_PARAMS = ("client", "local_sweeps", "worker_threads", "timeout")
# Fitted attributes of the distributed classes only.
_DASK_ATTRIBUTES = ("n_shards_", "shard_threads_", "sync_bytes_", "sync_seconds_",
                    "rebuilt_shards_")


class _ClusterAverager:
    """Averages the kept states' word-topic counts here; each shard averages
    its documents' proportions itself."""

    def __init__(self):
        self.n_kept = 0
        self.nwk = None

    def keep(self, chain, prior):
        if self.nwk is None:
            self.nwk = chain.nwk.astype(np.float64)
        else:
            self.nwk += chain.nwk
        self.n_kept += 1
        chain.keep(prior)

    def components(self, eta):
        """``components_`` (the kept counts' mean, transposed, plus ``eta``),
        made with one (K, V) table beside the sums, which it consumes."""
        nwk, self.nwk = self.nwk, None
        nwk /= self.n_kept
        components = np.ascontiguousarray(nwk.T)
        del nwk
        components += eta
        return components


def _known_rows(X):
    """X's number of rows, or ``None`` where a dask array does not know it
    (in-memory X may be a list of rows)."""
    rows = X.shape[0] if hasattr(X, "shape") else len(X)
    return int(rows) if isinstance(rows, (int, np.integer)) else None


def _shard_rows(X, specs):
    """The documents of each shard; 0 for a shard with a block of unknown size."""
    chunks = getattr(X, "chunks", None)
    rows = []
    for blocks, _, first in specs:
        if chunks is None:  # in-memory input: the blocks themselves
            rows.append(sum(int(b.shape[0]) for b in blocks))
            continue
        sizes = chunks[0][first:first + len(blocks)]
        rows.append(0 if any(np.isnan(s) for s in sizes) else int(sum(sizes)))
    return rows


def _merge_labels(summaries, caller):
    """The sorted distinct labels of all shards and each one's document count."""
    parts = [(s["labels"], s["label_counts"]) for s in summaries if s["labels"] is not None]
    if not parts:
        return None, None
    kinds = {lab.dtype.kind for lab, _ in parts if lab.size}
    if len(kinds - {"i", "u"}) > 1 or (kinds & {"i", "u"} and kinds - {"i", "u"}):
        raise ValueError(f"groups passed to {caller} mixes str and int labels; use one type.")
    labels = np.unique(np.concatenate([lab for lab, _ in parts]))
    sizes = np.zeros(labels.shape[0], dtype=np.int64)
    for lab, counts in parts:
        sizes[np.searchsorted(labels, lab)] += counts
    return labels, sizes


def _refuse_dask_input(X, name, method):
    """Inference runs here on in-memory data: a dask collection is refused
    rather than computed whole behind the user's back."""
    if not hasattr(X, "__dask_graph__"):
        return
    how = {
        "partial_fit": "feed it block by block, e.g. for block in X.blocks: "
                       "model.partial_fit(block.compute()); or fit the whole "
                       "collection on the cluster with fit",
        "transform": "apply it block by block, e.g. X.map_blocks(model.to_local()."
                     "transform, dtype=float, chunks=(X.chunks[0], (model.n_components,)))",
    }.get(method, "score it block by block: score sums over the documents, so the "
                  "blocks' scores add up")
    if name == "CompoundLDA" and method != "partial_fit":
        how += (" (with groups, zip the blocks: local = model.to_local(); "
                f"[dask.delayed(local.{method})(x, groups=g) for x, g in "
                "zip(X.to_delayed().ravel(), groups.to_delayed())])")
    raise ValueError(
        f"X passed to {name}.{method} is a dask collection; {method} runs in "
        f"this process on in-memory counts. Pass X.compute() if it fits, or {how}."
    )


class DistributedFitMixin:
    """The distributed ``fit``, ``to_local`` and pickling of the Dask classes.

    A subclass sets ``_local_class`` (the in-memory estimator it extends)
    and ``_doc_prior_name`` (the learnable prior that needs the documents'
    Gibbs-EM histograms).
    """

    _dask_constraints = {
        "client": [None, str, HasMethods(["submit", "sync"])],
        "local_sweeps": [StrictInterval(Integral, 1, None, closed="left")],
        "worker_threads": [StrictInterval(Integral, 1, None, closed="left"), None],
        "timeout": [StrictInterval(Real, 0, None, closed="neither")],
    }

    # ------------------------------------------------------ estimator protocol
    def __getstate__(self):
        """A ``distributed.Client`` in ``client`` cannot be pickled: it is
        replaced by ``None`` (the current client at the next fit)."""
        state = super().__getstate__()
        if state.get("client") is not None and not isinstance(state["client"], str):
            state = {**state, "client": None}
        return state

    def __sklearn_clone__(self):
        """``clone`` keeps the same client object (a client cannot be copied)."""
        client = self.client
        try:
            self.client = None
            new = _clone_parametrized(self)
        finally:
            self.client = client
        new.client = client
        return new

    def to_local(self):
        """The fitted model as the in-memory estimator.

        Returns
        -------
        estimator : CompoundLDA or LDAGibbs
            An instance of :class:`sklearn_clda.CompoundLDA` (or
            :class:`sklearn_clda.LDAGibbs`) with the same parameters (less
            ``client``, ``local_sweeps``, ``worker_threads`` and ``timeout``)
            and copies of the fitted attributes, for code that expects the
            in-memory class (``save_model``, the report, ``partial_fit`` on
            new batches).
        """
        check_is_fitted(self)
        params = {k: v for k, v in self.get_params(deep=False).items() if k not in _DASK_PARAMS}
        local = self._local_class(**params)
        for name, value in vars(self).items():
            if name in params or name in _DASK_PARAMS or name in _DASK_ATTRIBUTES:
                continue
            setattr(local, name, copy.deepcopy(value))
        return local

    # ------------------------------------------------------- local inference
    def _transform(self, X, groups, normalize=True, method="transform"):
        _refuse_dask_input(X, type(self).__name__, method)
        return super()._transform(X, groups, normalize=normalize, method=method)

    def _score_docs(self, X, groups, method):
        _refuse_dask_input(X, type(self).__name__, method)
        return super()._score_docs(X, groups, method)

    def _check_partial_fit(self, X):
        _refuse_dask_input(X, type(self).__name__, "partial_fit")
        super()._check_partial_fit(X)

    # ------------------------------------------------------------------- hooks
    def _keep(self, run, state, averager):
        averager.keep(state, self._sweep_prior(run))
        self._keep_sample(run, state)

    def _joint_log_likelihood(self, run, state):
        ll = word_log_likelihood(state.nwk, state.nk, self._eta_value(run))
        ll += state.doc_log_likelihood(self._sweep_prior(run))
        return float(ll + self._log_prior_extra(run))

    # --------------------------------------------------------------------- fit
    def _check_distributed(self, caller):
        """Settings that a distributed fit cannot honour."""
        if self.sampler not in ("auto", "dense"):
            raise ValueError(
                f"{caller} runs the dense sampler only, got "
                f"sampler={self.sampler!r}; fit the in-memory estimator for "
                "the Metropolis-Hastings samplers ('mh', 'sparse')."
            )
        if self.warm_start:
            raise ValueError(
                f"{caller} does not support warm_start=True (the chain's state "
                "lives on the workers only during the fit); fit the in-memory "
                "estimator (see to_local) to continue chains."
            )

    def _fit_distributed(self, X, groups):
        """Fit on the cluster; returns the fitted attributes."""
        name = type(self).__name__
        caller = f"{name}.fit"
        self._check_common_params()
        self._check_distributed(caller)
        run = self._schedule(self._check_burn_in())
        with fit_client(self.client, self.timeout) as client:
            if getattr(client, "status", None) in ("closing", "closed"):
                raise ValueError(
                    f"{caller}: the client passed as client= is closed; pass an open "
                    "Client, its scheduler's address, or None."
                )
            try:
                client.wait_for_workers(1, timeout=self.timeout)
            # distributed's WorkerStartTimeoutError, an asyncio.TimeoutError:
            # not the builtin one before Python 3.11.
            except (TimeoutError, asyncio.TimeoutError) as exc:
                raise TimeoutError(
                    f"{caller}: no Dask worker joined the cluster within "
                    f"timeout={self.timeout:g} s; start workers or raise timeout."
                ) from exc
            n_workers = len(cluster_workers(client))
            specs, n_features = shard_specs(self, X, groups, n_workers, caller)
            self._check_client_memory(_known_rows(X), n_features)  # before the build
            self._check_worker_memory(client, X, specs, n_features)
            entropy = self._seed_entropy()
            shard_ss, global_ss = np.random.SeedSequence(entropy).spawn(2)
            shards = ShardSet(
                client, specs, (n_features, int(self.n_components)), caller, self.timeout,
                fit_id=f"sklearn-clda-{uuid.uuid4().hex}", threads=self.worker_threads,
            )
            try:
                summaries = shards.build_all(shard_ss.spawn(len(specs)))
                result = self._run_distributed(
                    run, shards, summaries, entropy, global_ss, n_features, caller
                )
            finally:
                shards.drop()
        return _as_dtype(result, _output_dtype(X))

    def _check_client_memory(self, n_docs, n_features):
        """Refuse a fit this client cannot hold (``n_docs``: ``None`` when not
        known yet, counting the (V, K) tables alone)."""
        phases = _memory.dask_client_phases(n_docs or 0, n_features, int(self.n_components))
        _memory.check_fit_memory(self, (n_docs, n_features), phases)

    def _check_worker_memory(self, client, X, specs, n_features):
        """Refuse a fit whose largest shard cannot fit in the smallest
        ``memory_limit`` of the workers (those without a limit are not
        checked): the worker would be restarted by its nanny, again and
        again, instead of building the shard."""
        workers = cluster_workers(client)
        limits = {a: int(w.get("memory_limit") or 0) for a, w in workers.items()}
        limits = {a: m for a, m in limits.items() if m > 0}
        if not limits:
            return
        smallest = min(limits, key=lambda a: (limits[a], a))
        rows = max(_shard_rows(X, specs), default=0)
        phases = _memory.dask_worker_phases(rows, n_features, int(self.n_components))
        _memory.check_fit_memory(
            self, (_known_rows(X), n_features), phases,
            limit=(limits[smallest], f"the {{gib}} memory_limit of Dask worker {smallest}"),
        )

    def _run_distributed(self, run, shards, summaries, entropy, global_ss, n_features, caller):
        labels, sizes = _merge_labels(summaries, caller)
        n_groups = 1 if labels is None else labels.shape[0]
        n_docs = sum(s["n_docs"] for s in summaries)
        n_tokens = sum(s["n_tokens"] for s in summaries)
        if n_tokens == 0:
            raise ValueError(
                f"X passed to {caller} contains no tokens (all counts are zero); "
                "a topic model needs words."
            )
        self._check_collections(n_groups, n_docs)
        self._check_client_memory(n_docs, n_features)
        self._start_run(run, n_features, n_groups)
        doc_prior_learned = self._doc_prior_name in run.learned
        chain = ClusterChain(
            shards, summaries, entropy, self.n_components, self.local_sweeps,
            frozenset(range(run.burn_in // 2 + 1, run.burn_in + 1)) if doc_prior_learned
            else frozenset(),
            n_groups if self._draw_tables(run) else 0, labels, self._sweep_prior(run),
            self._eta_value(run),
        )
        rng = np.random.Generator(np.random.PCG64(global_ss))
        trace = _Trace(type(self).__name__, int(self.max_iter))
        averager = _ClusterAverager()
        sweep_times = self._sample(run, chain, chain, rng, trace, averager)
        if averager.n_kept == 0:
            self._keep(run, chain, averager)
        prior = self._sweep_prior(run)
        pieces = chain.finish(prior, self._keeps_table_sums)
        chain.warn_if_rebuilt(type(self).__name__)
        sync = {"sync_bytes_": np.asarray(chain.bytes, dtype=np.int64).reshape(-1, 2),
                "sync_seconds_": np.asarray(chain.sync_seconds)}
        chain.release()  # its (V, K) tables go before components_ is made
        del chain
        eta = self._eta_value(run)
        fitted = {
            "trace_": trace.finish(),
            "sweep_times_": np.asarray(sweep_times),
            "bound_": perplexity_of(sum(p["ll"] for p in pieces), n_tokens),
            "components_": averager.components(eta),
            "doc_topic_": np.concatenate([p["doc_topic"] for p in pieces]),
            **self._finish_run(run),
            "n_iter_": int(self.max_iter),
            "burn_in_": run.burn_in,
            "n_tokens_": n_tokens,
            "n_shards_": len(shards),
            "shard_threads_": np.array(
                [shards.shard_threads[i] for i in range(len(shards))], dtype=np.int64
            ),
            **sync,
            "rebuilt_shards_": list(shards.lost_log),
        }
        if self._keeps_table_sums:
            fitted["_table_sums"] = sum(p["table_sums"] for p in pieces)
            fitted["groups_"] = labels
            fitted["collection_sizes_"] = (
                np.array([n_docs]) if labels is None else sizes
            )
        return fitted
