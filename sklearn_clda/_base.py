"""Shared machinery of the Gibbs-sampled topic models.

:class:`_BaseGibbsTopicModel` owns the sampling loop, the fold-in
inference behind ``transform``, the document-completion ``score`` and the
trace. A fit never writes to the estimator until it has succeeded: the
loop works on a :class:`_FitRun` (the per-fit variables) and returns the
fitted attributes, which ``fit`` publishes all at once
(:meth:`_BaseGibbsTopicModel._publish`); a failed or interrupted fit
leaves the estimator as it was (:meth:`_BaseGibbsTopicModel._fit_transaction`).

The same loop continues a chain (``warm_start``: the state kept in
``_warm_chain`` after a fit, see :class:`~sklearn_clda._online.WarmChain`)
and ``partial_fit`` folds a batch into the model by the online method of
:mod:`sklearn_clda._online` (SCVB0: each piece of the batch gets expected
counts under the current topics, which take a step towards them).

Subclasses (:class:`~sklearn_clda.LDAGibbs`,
:class:`~sklearn_clda.CompoundLDA`) supply the model through hooks that
read and write the run, never ``self``:

- ``_start_run(run, n_features, n_groups)``: resolve the priors and the
  collection-level variables into ``run`` before sampling;
- ``_sweep_prior(run)``: the ``(n_groups, n_components)`` document-topic
  Dirichlet parameter used by the next sweep; ``_eta_value(run)`` the
  topic-word prior;
- ``_draw_tables(run)``: whether the sweep draws Antoniak table counts;
- ``_after_sweep(run, sweep, tables, rng, state)``: update collection-level
  variables after z-sweep number ``sweep`` (AGS or MGS draws of ``pi``);
- ``_update_priors(run, state, update)``: Gibbs-EM, collecting each
  sweep's statistics and running the M-step when ``update``;
- ``_trace_values(run)``: prior values and sampler statistics for ``trace_``;
- ``_log_prior_extra(run)``: log density of the collection-level variables;
- ``_reserve_samples(run, n_kept)``: make room for the ``n_kept``
  samples that the coming sweeps keep;
- ``_keep_sample(run, state)``: collect a kept sample's collection-level
  variables (the topics and documents are averaged here);
- ``_finish_run(run)``: the subclass's fitted attributes, as a dict;
- ``_final_state_extras(run, state)``: private fitted attributes from the
  chain's last state (cLDA's expected table counts);
- ``_after_online_step(run, doc_counts, log_none, doc_group)`` and
  ``_online_attributes(run)``: the collection-level update after each
  sub-batch of ``partial_fit``, and the fitted attributes it leaves. The
  subclasses' ``partial_fit`` put the run variables a batch takes over
  from the fitted model (priors, mixtures, table counts) into the run;
- ``_inference_prior(groups, n_docs, method)``: the prior rows and the
  row index of each document for fold-in (from fitted attributes);
- ``_fitted_values()``: the fitted attributes besides ``components_`` that
  inference and ``partial_fit`` read, with their shapes and what they must
  hold (checked by ``_check_fitted`` before each call reads them).
"""

import copy
import math
import time
import warnings
from abc import ABCMeta, abstractmethod
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import validate_parameter_constraints
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from . import _memory, _sampling
from ._chunking import balanced_bounds, budget_pieces, pieces, positive_cells
from ._corpus import (
    StrictInterval,
    check_counts,
    check_token_count,
    count_tokens,
    perplexity_of,
    split_alternate,
)
from ._fingerprint import data_fingerprint
from ._mh_sweeper import make_mh_sweeper, sampler_kernel
from ._online import (
    LOCAL_ITERATIONS,
    WarmChain,
    chain_settings,
    initial_counts,
    local_step,
    local_words,
    online_step,
    sub_batches,
)
from ._progress import log as _log
from ._progress import progress as _progress
from ._progress import verbose_logging as _verbose_logging
from ._sweeper import (
    _effective_n_jobs,
    _GibbsState,
    _n_threads,
    _shard_count,
    make_sweeper,
)
from ._hyper import MAX_CONCENTRATION, MIN_CONCENTRATION  # noqa: F401 (re-exported)
from .exceptions import FitInterruptedWarning

__all__ = ["_BaseGibbsTopicModel"]

# Most topics a model may have (int32 topic indices, and far beyond use).
MAX_COMPONENTS = 2**20
# Private fitted attributes, published (or dropped) with the public ones:
# the chain a warm_start fit keeps, CompoundLDA's expected collection table
# counts (for partial_fit), and the digest of the documents of doc_topic_.
_PRIVATE_FITTED = ("_warm_chain", "_table_sums", "_data_fingerprint")


def concentration_interval():
    """The ``_parameter_constraints`` entry of a Dirichlet concentration."""
    return StrictInterval(Real, MIN_CONCENTRATION, MAX_CONCENTRATION, closed="both")


class _SampleAverager:
    """Sums the kept states' topic-word counts and document proportions.

    The word-topic counts are summed in a sparse int64 matrix: a state has
    at most one nonzero cell per token, far fewer than ``V * K`` at many
    topics. Each kept state's document proportions are added, with no
    temporary, into one ``(n_docs, K)`` float64 table, which ``finish``
    divides in place into ``doc_topic_``. Both are bit for bit the sums of
    dense float64 tables: integer counts are exact either way.
    """

    def __init__(self):
        self.n_kept = 0
        self.nwk = None
        self.doc_topic = None

    def keep(self, state, prior):
        """Add ``state``; ``prior``: the ``(n_groups, K)`` document-topic prior of its sweep."""
        nwk = state.word_topic_counts().astype(np.int64)
        self.nwk = nwk if self.nwk is None else self.nwk + nwk
        first = self.doc_topic is None
        if first:
            self.doc_topic = np.empty(state.ndk.shape)
        _sampling.doc_proportions(state.ndk, state.doc_group, _as_prior(prior), self.doc_topic,
                                  add=not first)
        self.n_kept += 1

    def finish(self, eta, in_place, dtype=np.float64):
        """``components_`` and ``doc_topic_``, the means of the kept samples,
        in ``dtype`` (float32: the float64 means, rounded).

        ``in_place``: ``doc_topic_`` is the sum table itself, divided (the
        averager cannot take more samples; for float32 it is dropped once
        rounded); otherwise a copy (a kept chain goes on summing).
        """
        n = self.n_kept
        doc_topic = self.doc_topic if in_place else self.doc_topic.copy()
        doc_topic /= n
        if dtype != np.float64:
            if in_place:
                self.doc_topic = None
            rounded = np.empty(doc_topic.shape, dtype)
            for lo, hi in _row_pieces(doc_topic):
                rounded[lo:hi] = doc_topic[lo:hi]
            doc_topic = rounded
        return {"components_": _mean_topics(self.nwk, n, eta, dtype), "doc_topic_": doc_topic}


def _mean_topics(sums, n, eta, dtype):
    """``components_`` from the kept samples' ``(V, K)`` sparse word-topic
    sums: ``(sums.toarray() / n).T + eta`` in ``dtype`` (rounded from
    float64), made as ``eta`` everywhere and then the positive cells, by
    pieces of cells (no dense temporary, and no strided writes of dense
    pieces)."""
    V, K = sums.shape
    components = np.full((K, V), eta, dtype)
    for lo, hi in budget_pieces(sums.indptr, 24):
        a, b = sums.indptr[lo], sums.indptr[hi]
        words = np.repeat(np.arange(lo, hi), np.diff(sums.indptr[lo:hi + 1]))
        components[sums.indices[a:b], words] = sums.data[a:b] / n + eta
    return _positive_topics(components)


def doc_proportions(ndk, doc_group, prior, lo, hi):
    """Posterior mean topic proportions of documents ``lo:hi`` given their
    topic counts: rows of ``ndk + prior[doc_group]``, normalized (by
    ``_sampling.doc_proportions``)."""
    theta = np.empty((hi - lo, ndk.shape[1]))
    _sampling.doc_proportions(ndk[lo:hi], doc_group[lo:hi], _as_prior(prior), theta)
    return theta


def _as_prior(prior):
    return np.ascontiguousarray(prior, dtype=np.float64)


def prior_row_totals(ndk, doc_group, prior, lo, hi):
    """Row sums of ``ndk[lo:hi] + prior[doc_group[lo:hi]]`` with one float64
    temporary of the piece's shape: the prior rows, the counts added in
    place. (Written as that sum, it needs two from Python 3.14 on, where
    NumPy no longer reuses the first temporary for the result.)"""
    rows = prior[doc_group[lo:hi]]
    rows += ndk[lo:hi]
    return rows.sum(axis=1)


def _row_pieces(table):
    """Pieces of rows of a ``(n, K)`` table within the chunk budget, for two
    float64 temporaries per row (a row of prior gathered, a result row)."""
    return budget_pieces(np.arange(table.shape[0] + 1), 16 * table.shape[1])


class _LiveChain:
    """A running chain's sampler state and sweeper, held in one place so
    that the end of the chain can drop both, and with them the count
    tables, before the fitted averages are made."""

    def __init__(self, state, sweeper):
        self.state = state
        self.sweeper = sweeper

    def release(self):
        self.state = self.sweeper = None

    def drop_sweeper(self):
        """The sweeper's own token arrays go (the state is up to date once
        it is closed), before the end of the chain's per-token work."""
        self.sweeper = None


class _FitRun:
    """The variables of one fit: its schedule, and whatever the model's hooks keep.

    ``burn_in``, ``learned`` (the prior names to learn) and
    ``update_sweeps`` (the Gibbs-EM M-step sweeps) are set by the base
    class; the hooks add their own attributes (priors, ``pi``, ...).
    """

    def __init__(self, burn_in, learned, update_sweeps):
        self.burn_in = burn_in
        self.learned = learned
        self.update_sweeps = update_sweeps


class _Trace:
    """The evaluations recorded in ``trace_`` (and logged)."""

    def __init__(self, name, max_iter, previous=None):
        """``previous``: the ``trace_`` of the chain this one continues."""
        self.name = name
        self.max_iter = max_iter
        self.columns = {"iteration": [], "log_likelihood": [], "seconds": []}
        self.start = time.perf_counter()
        if previous is not None:
            self.columns = {k: list(np.asarray(v).tolist()) for k, v in previous.items()}
            if self.columns["seconds"]:
                self.start -= self.columns["seconds"][-1]

    def record(self, iteration, ll, values):
        cols = self.columns
        cols["iteration"].append(iteration)
        cols["log_likelihood"].append(ll)
        cols["seconds"].append(time.perf_counter() - self.start)
        for key, value in values.items():
            cols.setdefault(key, []).append(value)
        _log(
            "%s iteration %d of %d, log-likelihood %.6e",
            self.name, iteration, self.max_iter, ll,
        )

    def finish(self):
        out = {k: np.asarray(v) for k, v in self.columns.items()}
        out["iteration"] = out["iteration"].astype(np.int64)
        return out


class _BaseGibbsTopicModel(
    ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator, metaclass=ABCMeta
):
    """Base class of the Gibbs-sampled topic models (not public)."""

    _parameter_constraints: dict = {
        "n_components": [StrictInterval(Integral, 1, MAX_COMPONENTS, closed="both")],
        "max_iter": [StrictInterval(Integral, 1, None, closed="left")],
        "burn_in": [None, StrictInterval(Integral, 0, None, closed="left")],
        "thin": [StrictInterval(Integral, 1, None, closed="left")],
        "evaluate_every": [StrictInterval(Integral, None, None, closed="neither")],
        "max_doc_update_iter": [StrictInterval(Integral, 1, None, closed="left")],
        # A change of proportions (or, in VEM, relative to their mean): 1
        # already stops at the first iteration.
        "mean_change_tol": [StrictInterval(Real, 0, 1, closed="both")],
        "prior_update_every": [StrictInterval(Integral, 1, None, closed="left")],
        "n_jobs": [None, StrictInterval(Integral, None, None, closed="neither")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        "warm_start": ["boolean"],
    }

    # Names accepted by ``learn_priors`` (subclasses override).
    _learnable_priors: tuple = ()
    # The subset of ``_learnable_priors`` that ``learn_priors=True`` means.
    _default_learned_priors: tuple = ()

    # ------------------------------------------------------------------ hooks
    def _draw_tables(self, run):
        """Whether the sweeps draw Antoniak table counts (cLDA's AGS)."""
        return False

    def _update_priors(self, run, state, update):
        """Gibbs-EM: collect this sweep's statistics; if ``update``, run the
        M-step over the samples collected since the previous one (subclasses).
        """

    def _trace_values(self, run):
        """Current prior values (and sampler statistics) recorded in ``trace_``."""
        return {}

    @abstractmethod
    def _start_run(self, run, n_features, n_groups):
        """Resolve the priors and collection-level variables into ``run``."""

    @abstractmethod
    def _sweep_prior(self, run):
        """Document-topic Dirichlet parameter per collection, (n_groups, K)."""

    @abstractmethod
    def _eta_value(self, run):
        """The symmetric topic-word prior of the next sweep."""

    def _after_sweep(self, run, sweep, tables, rng, state):
        """Update collection-level variables after z-sweep ``sweep`` (cLDA: pi)."""

    def _log_prior_extra(self, run):
        """Log density of sampled collection-level variables (cLDA: pi)."""
        return 0.0

    def _reserve_samples(self, run, n_kept):
        """Make room for ``n_kept`` more calls of ``_keep_sample``."""

    def _keep_sample(self, run, state):
        """Collect a kept sample's collection-level variables."""

    def _kept_sample_bytes(self, n_groups, n_kept):
        """The bytes that ``n_kept`` calls of ``_keep_sample`` collect (for
        the memory check; cLDA: the collections' mixtures)."""
        return 0

    def _final_state_extras(self, run, state):
        """Private fitted attributes computed from the chain's last state
        (cLDA: the collections' expected table counts, for ``partial_fit``)."""
        return {}

    @abstractmethod
    def _finish_run(self, run):
        """The subclass's fitted attributes (priors, collection mixtures), a dict."""

    @abstractmethod
    def _inference_prior(self, groups, n_docs, method):
        """Return ``(prior_rows, doc_rows)`` for fold-in inference."""

    @abstractmethod
    def _fitted_values(self):
        """``(name, value, shapes, rule)`` of each fitted attribute besides
        ``components_`` that inference and ``partial_fit`` read: ``shapes``
        the shapes it may have, ``rule`` one of :data:`_FITTED_RULES`."""

    # ---------------------------------------------------------- transactions
    @contextmanager
    def _fit_transaction(self, method="fit"):
        """All or nothing: on any exception (Ctrl-C included) the estimator
        gets back exactly the attributes it had before ``fit`` (or
        ``partial_fit``: its previous fitted state, or none), and a
        ``KeyboardInterrupt`` says so in a
        :class:`~sklearn_clda.exceptions.FitInterruptedWarning`. A kept
        chain is copied before it is continued, never modified in place, so
        the restored attributes are exactly the old ones.
        """
        saved = dict(vars(self))
        try:
            yield
        except BaseException as exc:
            vars(self).clear()
            vars(self).update(saved)
            if isinstance(exc, KeyboardInterrupt):
                kept = (
                    "keeps its previous fitted state"
                    if any(k.endswith("_") and not k.startswith("_") for k in saved)
                    else "stays unfitted"
                )
                warnings.warn(
                    f"{type(self).__name__}.{method} was interrupted; the estimator {kept}.",
                    FitInterruptedWarning,
                    stacklevel=3,
                )
            raise

    def _publish(self, attributes):
        """Set the fitted attributes at once, dropping those of an earlier fit
        that this one does not produce (e.g. MGS's after an AGS refit, or the
        kept chain after a fit without ``warm_start``)."""
        keep = {"n_features_in_", "feature_names_in_"}
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("_")]:
            if name not in keep and name not in attributes:
                delattr(self, name)
        for name in _PRIVATE_FITTED:
            if name not in attributes and name in vars(self):
                delattr(self, name)
        for name, value in attributes.items():
            setattr(self, name, value)
        return self

    # ---------------------------------------------------------------- fitting
    def _check_common_params(self):
        """Checks beyond ``_parameter_constraints``."""
        _effective_n_jobs(self.n_jobs)

    def _learned_priors(self):
        """The set of prior names that ``learn_priors`` asks to learn."""
        value = self.learn_priors
        if value is None or isinstance(value, (bool, np.bool_)):
            return frozenset(self._default_learned_priors) if value else frozenset()
        names = [value] if isinstance(value, str) else list(value)
        unknown = sorted(set(map(str, names)) - set(self._learnable_priors))
        if unknown or not all(isinstance(n, str) for n in names):
            raise ValueError(
                f"learn_priors got unknown name(s) {unknown or names}; choose from "
                f"{list(self._learnable_priors)}, or pass True or False."
            )
        return frozenset(names)

    def _check_burn_in(self):
        # Integer settings are used as Python ints: under NumPy 2's promotion
        # rules a numpy int8 setting would overflow the loop's arithmetic.
        max_iter = int(self.max_iter)
        burn_in = max_iter // 2 if self.burn_in is None else int(self.burn_in)
        if burn_in >= max_iter:
            raise ValueError(
                f"burn_in={burn_in} must be smaller than max_iter={self.max_iter} "
                "so that at least one sample is kept."
            )
        return burn_in

    def _plan_run(self, X, n_groups, itemsize=8):
        """Validate the settings against the data (``itemsize``: the bytes of
        an entry of the fitted averages); return the run's schedule."""
        self._check_common_params()
        burn_in = self._check_burn_in()
        if count_tokens(X) == 0:
            raise ValueError(
                f"X passed to {type(self).__name__}.fit contains no tokens (all "
                "counts are zero after rounding); a topic model needs words."
            )
        check_token_count(X, f"{type(self).__name__}.fit")
        self._check_memory(X, n_groups, itemsize,
                           max(1, (int(self.max_iter) - burn_in) // int(self.thin)))
        return self._schedule(burn_in)

    def _check_memory(self, X, n_groups, itemsize, n_kept):
        """Refuse, before any work, a Gibbs fit keeping ``n_kept`` samples
        that this machine cannot hold (see ``_memory``)."""
        shape, K = X.shape, int(self.n_components)
        kernel = self._kernel(X)
        phases = partial(_memory.gibbs_phases, *shape, K, n_groups, itemsize=itemsize,
                         n_tokens=count_tokens(X),
                         uniform_bytes=self._uniform_bytes(X, kernel),
                         kept_samples=self._kept_sample_bytes(n_groups, n_kept),
                         previous=self._previous_fit_bytes(), keeps_chain=self.warm_start)
        _memory.check_fit_memory(self, shape, phases(word_table=kernel != "sparse"),
                                 phases(word_table=False))

    def _uniform_bytes(self, X, kernel):
        """The sweeping threads' buffers of uniforms: each thread draws a
        document's at once, one float64 per token (exact kernel) or three
        per MH step and token, so each buffer is as long as the longest
        document."""
        per_token = 8 if kernel == "dense" else 24 * int(self.mh_steps)
        threads = _n_threads(_effective_n_jobs(self.n_jobs))
        return per_token * int(np.asarray(X.sum(axis=1)).max(initial=0)) * threads

    def _previous_fit_bytes(self):
        """Bytes of the arrays this estimator holds from its last fit: its
        fitted arrays and the chain a ``warm_start`` fit kept."""
        arrays = [v for k, v in vars(self).items() if k.endswith("_") and hasattr(v, "nbytes")]
        chain = getattr(self, "_warm_chain", None)
        if chain is not None:
            sums = chain.averager.nwk
            arrays += [chain.z, chain.averager.doc_topic, getattr(chain.run, "pi_samples", None)]
            if sums is not None:
                arrays += [sums.data, sums.indices, sums.indptr]
        return sum(a.nbytes for a in arrays if a is not None)

    def _schedule(self, burn_in):
        """The run's schedule: burn-in, the priors to learn and the Gibbs-EM
        update sweeps (``ValueError`` if learning has no update sweep)."""
        learned = self._learned_priors()
        # Gibbs-EM: in the second half of burn-in every sweep is an E-step
        # sample, and every prior_update_every sweeps an M-step maximizes
        # over the samples since the previous one; the priors are then
        # frozen so that every kept sample comes from the same posterior.
        update_sweeps = [
            it for it in range(burn_in // 2 + 1, burn_in + 1)
            if it % int(self.prior_update_every) == 0
        ]
        if learned - {"alpha"} and not update_sweeps:
            raise ValueError(
                f"learn_priors={self.learn_priors!r} needs at least one update "
                f"sweep between burn_in // 2 and burn_in (={burn_in}) that is a "
                f"multiple of prior_update_every={self.prior_update_every}; "
                "increase burn_in or lower prior_update_every."
            )
        return _FitRun(burn_in, learned, frozenset(update_sweeps))

    def _seed_entropy(self):
        """Four integers drawn from ``random_state``: the seed of a fit's streams."""
        rs = check_random_state(self.random_state)
        return rs.randint(0, 2**31 - 1, size=4).tolist()

    def _make_streams(self):
        """Independent generators for init, sweeps and collection-level draws."""
        seed = np.random.SeedSequence(self._seed_entropy())
        init_ss, sweep_ss, global_ss = seed.spawn(3)
        return (
            np.random.Generator(np.random.PCG64(init_ss)),
            sweep_ss,
            np.random.Generator(np.random.PCG64(global_ss)),
        )

    def _fit_gibbs(self, X, doc_group, n_groups, labels=None, dtype=np.float64):
        """Run the sampler on a validated CSR count matrix (with
        ``warm_start`` and a kept chain for this data: continue that chain).

        Returns the fitted attributes, ``components_`` and ``doc_topic_`` in
        ``dtype``; nothing is written to ``self``. ``labels`` (the
        collection labels) enter the data's fingerprint.
        """
        data = data_fingerprint(X, doc_group, labels)
        fingerprint = data if self.warm_start else None
        chain = self._chain_to_continue(X, fingerprint)
        if chain is not None:
            # The kept chain counts as the previous fit's; its copy goes on
            # with this fit's samples.
            self._check_memory(X, n_groups, np.dtype(dtype).itemsize,
                               chain.averager.n_kept + int(self.max_iter) // int(self.thin))
            fitted = self._continue_chain(X, doc_group, n_groups, chain, dtype)
        else:
            run = self._plan_run(X, n_groups, np.dtype(dtype).itemsize)
            init_rng, sweep_seed, global_rng = self._make_streams()
            self._start_run(run, X.shape[1], n_groups)
            live = self._live_chain(X, doc_group, n_groups, run, init_rng, sweep_seed)
            fitted = self._run_chain(X, run, live, global_rng, _SampleAverager(),
                                     fingerprint=fingerprint, dtype=dtype)
        # Which documents doc_topic_ is of (see _fingerprint.fitted_on).
        fitted["_data_fingerprint"] = data
        return fitted

    def _live_chain(self, X, doc_group, n_groups, run, init_rng, seed_sequence, z=None):
        """A new chain's state (from ``z``, or drawn from ``init_rng``) and sweeper."""
        kernel = self._kernel(X)
        state = _GibbsState(X, doc_group, int(self.n_components), init_rng, z=z,
                            word_table=kernel != "sparse")
        return _LiveChain(state, self._sweeper(state, run, n_groups, seed_sequence, kernel))

    def _kernel(self, X):
        """The z-step kernel of a fit on ``X``: "dense", "sparse" or "mh"."""
        return sampler_kernel(self.sampler, int(self.n_components), X)

    def _sweeper(self, state, run, n_groups, seed_sequence, kernel):
        n_table_rows = n_groups if self._draw_tables(run) else 0
        n_shards = _shard_count(self.n_jobs, state.doc_len.shape[0], state.words.shape[0])
        if kernel == "dense":
            return make_sweeper(state, n_shards, seed_sequence, n_table_rows)
        return make_mh_sweeper(state, n_shards, seed_sequence, n_table_rows, self.mh_steps,
                               kernel)

    def _run_chain(self, X, run, live, rng, averager, done=0, previous=None,
                   fingerprint=None, dtype=np.float64):
        """Sweeps ``done + 1 .. done + max_iter`` of a chain (a ``_LiveChain``,
        released at its end); returns the fitted attributes (the averages in
        ``dtype``). ``previous``: the ``(trace_, sweep_times_)`` of the
        chain this call continues. With a ``fingerprint`` (``warm_start``)
        the chain's state goes into the private ``_warm_chain`` attribute."""
        total = done + int(self.max_iter)
        trace = _Trace(type(self).__name__, total, None if previous is None else previous[0])
        state, sweeper = live.state, live.sweeper
        sweep_times = self._sample(run, state, sweeper, rng, trace, averager, done)
        if previous is not None:
            sweep_times = np.concatenate([previous[1], sweep_times])
        fitted = {"trace_": trace.finish(), "sweep_times_": np.asarray(sweep_times)}
        if fingerprint is not None:
            fitted["_warm_chain"] = WarmChain(
                fingerprint=fingerprint, settings=chain_settings(self),
                n_shards=len(sweeper.shards), n_iter=total, run=run, z=state.z,
                averager=averager, bit_states=sweeper.bit_states(),
                global_state=rng.bit_generator.state,
                trace={k: v.copy() for k, v in fitted["trace_"].items()},
                sweep_times=fitted["sweep_times_"].copy(),
            )
        del sweeper
        live.drop_sweeper()
        if averager.n_kept == 0:
            # burn_in + thin overshoots max_iter: publish the last state (a
            # kept chain does not count it among its samples).
            run, averager = copy.deepcopy(run), copy.deepcopy(averager)
            self._keep(run, state, averager)
        bound = self._last_state_perplexity(run, state, X)
        extras = self._final_state_extras(run, state)
        n_tokens = state.words.shape[0]
        # The count tables go before the averages' output tables are made.
        del state
        live.release()
        result = {
            **fitted,
            "bound_": bound,
            **averager.finish(self._eta_value(run), fingerprint is None, dtype),
            **self._finish_run(run),
            **extras,
            "n_iter_": total,
            "burn_in_": run.burn_in,
            "n_tokens_": n_tokens,
        }
        if fingerprint is not None and fitted["_warm_chain"].run is run:
            # The kept chain goes on with its own run: the fitted attributes
            # just made from this one (its kept draws) must not share arrays
            # with it. Copied now that the count tables are gone.
            fitted["_warm_chain"].run = copy.deepcopy(run)
        return result

    # ------------------------------------------------------- continued chains
    def _chain_to_continue(self, X, fingerprint):
        """The kept chain that this ``warm_start`` fit continues, or ``None``
        for a new chain; ``ValueError`` if it cannot continue on this data."""
        chain = getattr(self, "_warm_chain", None) if self.warm_start else None
        name = type(self).__name__
        if chain is None:
            if self.warm_start and hasattr(self, "components_"):
                warnings.warn(
                    f"{name}.fit got warm_start=True, but the estimator keeps no "
                    "chain (its last fit ran with warm_start=False, or it was "
                    "updated by partial_fit); starting a new chain.",
                    UserWarning,
                    stacklevel=4,
                )
            return None
        self._check_common_params()
        chain.check_continues(name, fingerprint, chain_settings(self), self.burn_in)
        return chain

    def _continue_chain(self, X, doc_group, n_groups, chain, dtype):
        """``max_iter`` more sweeps of a kept chain, from a copy of its state
        (the kept one stays as it was if this call fails).

        With the chain's shard count the shards' random streams go on where
        they stopped; with another (``n_jobs`` changed) the new shards get
        fresh streams seeded from the chain's collection-level stream, so a
        given sequence of fits still gives the same result every time.
        """
        chain = copy.deepcopy(chain)
        rng = np.random.Generator(np.random.PCG64())
        rng.bit_generator.state = chain.global_state
        n_shards = _shard_count(self.n_jobs, X.shape[0], chain.z.shape[0])
        same_shards = n_shards == chain.n_shards
        seed = np.random.SeedSequence(0 if same_shards else rng.integers(2**63))
        live = self._live_chain(X, doc_group, n_groups, chain.run, None, seed, z=chain.z)
        if same_shards:
            live.sweeper.set_bit_states(chain.bit_states)
        return self._run_chain(
            X, chain.run, live, rng, chain.averager, done=chain.n_iter,
            previous=(chain.trace, chain.sweep_times), fingerprint=chain.fingerprint,
            dtype=dtype,
        )

    # -------------------------------------------------------------- streaming
    def _check_partial_fit(self, X):
        """``ValueError`` for what ``partial_fit`` cannot take: parameters
        that are not valid (scikit-learn's ``_fit_context`` validates them
        on the first call only), or an ``n_components`` changed since the
        fit that it would continue."""
        if hasattr(self, "components_"):
            self._validate_params()
            self._check_fitted("partial_fit")
        if hasattr(self, "components_") and self.components_.shape[0] != self.n_components:
            raise ValueError(
                f"{type(self).__name__}.partial_fit continues the fitted model, which has "
                f"{self.components_.shape[0]} topics, but n_components is now "
                f"{self.n_components}; set it back, or call fit to start a model with "
                f"{self.n_components} topics."
            )

    def _empty_batch(self, X, first):
        """Whether ``partial_fit``'s batch has no token, so that the fitted
        model stays as it is (with a warning); a first batch without one
        cannot start a model and raises."""
        if count_tokens(X) > 0:
            return False
        name = f"{type(self).__name__}.partial_fit"
        if first:
            raise ValueError(
                f"X passed to {name} contains no tokens (all counts are zero after "
                "rounding), so it cannot start a model; start the stream with a batch "
                "that has words (later batches without any are skipped)."
            )
        warnings.warn(
            f"X passed to {name} contains no tokens (all counts are zero after "
            "rounding); the batch is skipped and the model is unchanged.",
            UserWarning,
            stacklevel=3,
        )
        return True

    def _partial_fit_online(self, X, doc_group, n_groups, carry):
        """Fold one batch into the model by the online method (SCVB0, see
        ``_online``); returns the fitted attributes.

        ``carry`` maps run variables to their values from the fitted model
        (priors, collection mixtures and table counts), or ``None``.
        """
        self._check_common_params()
        n_tokens = count_tokens(X)
        _memory.check_fit_memory(self, X.shape,
                                 _memory.online_phases(*X.shape, int(self.n_components)))
        run = _FitRun(0, frozenset(), frozenset())
        self._start_run(run, X.shape[1], n_groups)
        for name, value in (carry or {}).items():
            setattr(run, name, value)
        eta = self._eta_value(run)
        fitted = hasattr(self, "components_")
        if fitted:
            counts = np.asarray(self.components_, dtype=np.float64).T - eta
            np.maximum(counts, 0.0, out=counts)
        else:
            rng = np.random.default_rng(self._seed_entropy())
            counts = initial_counts(X.shape[1], int(self.n_components), eta, rng)
        mass = float(self.n_tokens_) if fitted else 0.0
        theta, ll, seconds = self._online_pass(X, doc_group, run, counts, mass)
        n_steps = ll.shape[0]
        # counts' last use; a view of it when counts came from components_
        components = np.ascontiguousarray(counts.T)
        components += eta
        return {
            "components_": components,
            "doc_topic_": theta,
            **self._online_attributes(run),
            "bound_": perplexity_of(ll.sum(), n_tokens),
            "n_iter_": n_steps,
            "burn_in_": 0,
            "trace_": {
                "iteration": np.arange(1, n_steps + 1, dtype=np.int64),
                "log_likelihood": ll,
                "seconds": np.cumsum(seconds),
            },
            "sweep_times_": seconds,
            "n_tokens_": n_tokens + (self.n_tokens_ if fitted else 0),
            "n_batches_": getattr(self, "n_batches_", 1 if fitted else 0) + 1,
        }

    def _online_pass(self, X, doc_group, run, counts, mass):
        """Fold the batch in, sub-batch by sub-batch, updating ``counts`` (the
        word-topic counts of the ``mass`` tokens seen so far) in place;
        returns each document's topic proportions and each sub-batch's
        log-likelihood and seconds.

        ``counts`` is kept as ``scale * M`` so that the step's shrinking of
        the old counts costs nothing per sub-batch.
        """
        eta = self._eta_value(run)
        V = counts.shape[0]
        theta = np.empty((X.shape[0], self.n_components))
        totals, scale = counts.sum(axis=0), 1.0
        ll, seconds = [], []
        for lo, hi in sub_batches(X.shape[0]):
            t0 = time.perf_counter()
            words, X_local = local_words(X[lo:hi])
            groups = doc_group[lo:hi]
            phi = (scale * counts[words] + eta) / (scale * totals + V * eta)
            phi = np.ascontiguousarray(phi)
            theta[lo:hi], expected, doc_counts, log_none = local_step(
                X_local, self._sweep_prior(run), groups, phi, LOCAL_ITERATIONS
            )
            part = np.empty(hi - lo)
            _sampling.doc_log_likelihood(*_csr_arrays(X_local), theta[lo:hi], phi, part)
            keep, add = (float(v) for v in online_step(mass, X_local.data.sum()))
            if keep == 0.0:
                counts[...], totals[...], scale = 0.0, 0.0, 1.0
            else:
                scale *= keep
            counts[words] += (add / scale) * expected
            totals += (add / scale) * expected.sum(axis=0)
            self._after_online_step(run, doc_counts, log_none, groups)
            mass += X_local.data.sum()
            ll.append(part.sum())
            seconds.append(time.perf_counter() - t0)
        counts *= scale
        return theta, np.asarray(ll), np.asarray(seconds)

    def _after_online_step(self, run, doc_counts, log_none, doc_group):
        """Update collection-level variables after a sub-batch of the online
        method, given its documents' expected topic counts and the log
        probability that a document has none of a topic (cLDA: the table
        counts and the mixtures)."""

    def _online_attributes(self, run):
        """The subclass's fitted attributes after ``partial_fit``."""
        return self._finish_run(run)

    def _sample(self, run, state, sweeper, rng, trace, averager, done=0):
        """Sweeps ``done + 1 .. done + max_iter``; returns each sweep's wall time."""
        burn_in, every, thin = run.burn_in, int(self.evaluate_every), int(self.thin)
        evaluate = every > 0
        learning = bool(run.learned - {"alpha"})
        last = done + int(self.max_iter)
        self._reserve_samples(run, _n_kept(done, last, burn_in, thin))
        sweep_times = []
        with _verbose_logging(self.verbose), _progress(
            last - done, self.verbose, type(self).__name__
        ) as bar, sweeper:
            if evaluate and done == 0:
                self._record(run, state, trace, 0)
            for it in range(done + 1, last + 1):
                t0 = time.perf_counter()
                tables = sweeper.sweep(self._sweep_prior(run), self._eta_value(run))
                self._after_sweep(run, it, tables, rng, state)
                if learning and burn_in // 2 < it <= burn_in:
                    self._update_priors(run, state, it in run.update_sweeps)
                sweep_times.append(time.perf_counter() - t0)
                if it > burn_in and (it - burn_in) % thin == 0:
                    self._keep(run, state, averager)
                if (evaluate and it % every == 0) or it == last:
                    self._record(run, state, trace, it)
                bar.update(1)
        return sweep_times

    def _keep(self, run, state, averager):
        averager.keep(state, self._sweep_prior(run))
        self._keep_sample(run, state)

    def _record(self, run, state, trace, iteration):
        trace.record(iteration, self._joint_log_likelihood(run, state), self._trace_values(run))

    def _last_state_perplexity(self, run, state, X):
        """Training perplexity at the chain's last state (scikit-learn's
        ``bound_``): ``exp(-sum_dw n_dw log(theta_d . phi_w) / N)`` with
        ``theta_d`` and ``phi_k`` the posterior means given the last ``z``."""
        eta = self._eta_value(run)
        prior = np.ascontiguousarray(self._sweep_prior(run), dtype=np.float64)
        ndk, doc_group = state.ndk, state.doc_group
        nwk = state.word_topic_counts()
        # theta and phi are made on the fly by the kernel, from the counts.
        doc_total = np.empty(ndk.shape[0])
        for lo, hi in _row_pieces(ndk):
            doc_total[lo:hi] = prior_row_totals(ndk, doc_group, prior, lo, hi)
        ll = np.empty(X.shape[0])
        _sampling.state_log_likelihood(
            *_csr_arrays(X), ndk, doc_group, prior, doc_total, nwk.indptr.astype(np.int64),
            nwk.indices.astype(np.int32, copy=False), nwk.data, float(eta),
            state.nk + nwk.shape[0] * eta, ll,
        )
        return perplexity_of(ll.sum(), state.words.shape[0])

    def _joint_log_likelihood(self, run, state):
        """log p(w, z) (and log p(pi | alpha) for cLDA) at the current state."""
        ll = word_log_likelihood(state.word_topic_counts(), state.nk, self._eta_value(run))
        ll += doc_log_likelihood(state.ndk, state.doc_len, state.doc_group, self._sweep_prior(run))
        return float(ll + self._log_prior_extra(run))

    # -------------------------------------------------------------- inference
    def _check_inference_params(self):
        """Validate the parameters that inference reads besides the fitted
        attributes: ``set_params`` may have changed them since ``fit``
        validated them (the others are left to the next fit)."""
        names = ("n_jobs", "max_doc_update_iter", "mean_change_tol")
        validate_parameter_constraints(
            {name: self._parameter_constraints[name] for name in names},
            {name: getattr(self, name) for name in names}, caller_name=type(self).__name__,
        )

    def _check_fitted(self, method):
        """ValueError naming the attribute when one that ``method`` reads was
        set by hand to what it cannot use (NaN proportions or scores
        otherwise, or a crash deep inside). ``components_``: a 2-d array of
        real numbers (its values are checked by the kernel that reads it)."""
        name = f"{type(self).__name__}.{method}"
        comp = self.components_
        if not (isinstance(comp, np.ndarray) and comp.ndim == 2 and comp.dtype.kind in "biuf"
                and comp.size > 0):
            raise ValueError(
                f"{name}: components_ must be a non-empty NumPy array of shape "
                f"(n_topics, n_features) of real numbers; it was set to {_described(comp)}."
            )
        for attr, value, shapes, rule in self._fitted_values():
            holds, what = _FITTED_RULES[rule]
            if isinstance(value, Real) and () in shapes:  # (quicker than as an array)
                usable = holds(float(value))
            else:
                a = np.asarray(value) if _is_real_array(value) else None
                usable = a is not None and a.shape in shapes and holds(a.astype(np.float64))
            if not usable:
                raise ValueError(
                    f"{name}: {attr} must be {what}, of shape "
                    f"{' or '.join(map(str, shapes))}; it was set to {_described(value)}."
                )

    def _topic_word_parts(self, X=None):
        """The topics' probabilities as ``_sampling.topic_word_parts`` gives
        them (a floor per topic and each word's part above it), with no
        ``(V, K)`` table. With a checked count matrix ``X`` of fewer entries
        than words, only its words are listed (all that a fold-in of ``X``
        reads), so a call on a few documents does not pay for the whole
        vocabulary's lists."""
        components = self.components_
        if components.dtype not in (np.float32, np.float64) or not components.flags.c_contiguous:
            components = np.ascontiguousarray(components, dtype=np.float64)
        V = components.shape[1]
        if X is not None and V != X.shape[1]:
            raise ValueError(f"components_ has {V} columns but X has {X.shape[1]} features; "
                             "components_ was replaced by a table of another vocabulary")
        words = None
        if X is not None and X.nnz < V:  # else most words are read anyway
            words = np.unique(X.indices).astype(np.int32)
        return _sampling.topic_word_parts(components, None, words)

    def _inference_pieces(self, indptr):
        """Document ranges of a fold-in (about equal nonzeros, four per thread
        for balance) and the number of threads that run them."""
        n_threads = _n_threads(min(_effective_n_jobs(self.n_jobs), len(indptr) - 1))
        n_pieces = 4 * n_threads if n_threads > 1 else 1
        return pieces(balanced_bounds(indptr, n_pieces)), n_threads

    def _fold_in(self, X, prior_rows, doc_rows, parts):
        """theta for each CSR row of X by the deterministic fold-in fixed point;
        ``parts``: the topics as ``_sampling.topic_word_parts`` gives them."""
        theta = np.empty((X.shape[0], self._n_features_out), dtype=np.float64)
        indptr, indices, data = _csr_arrays(X)
        prior_rows = np.ascontiguousarray(prior_rows, dtype=np.float64)
        doc_rows = np.ascontiguousarray(doc_rows, dtype=np.int32)

        def run(bounds, stop):
            lo, hi = bounds
            a, b = indptr[lo], indptr[hi]
            _sampling.fold_in(
                indptr[lo : hi + 1] - a, indices[a:b], data[a:b], doc_rows[lo:hi],
                prior_rows, *parts, int(self.max_doc_update_iter), self.mean_change_tol,
                theta[lo:hi], stop,
            )

        _map_interruptibly(run, *self._inference_pieces(indptr))
        return theta

    def _check_normalize(self, normalize, method):
        validate_parameter_constraints({"normalize": ["boolean"]}, {"normalize": normalize},
                                       caller_name=f"{type(self).__name__}.{method}")

    def _transform(self, X, groups, normalize=True, method="transform"):
        check_is_fitted(self)
        self._check_fitted(method)
        self._check_inference_params()
        self._check_normalize(normalize, method)
        dtype = self.components_.dtype  # the model's, as scikit-learn's LDA
        X = check_counts(self, X, reset=False, method=method)
        _memory.check_transform_memory(self, X.shape[0], method, np.dtype(dtype).itemsize)
        prior_rows, doc_rows = self._inference_prior(groups, X.shape[0], method)
        theta = self._fold_in(X, prior_rows, doc_rows, self._topic_word_parts(X))
        if not normalize:
            # The fixed point's pseudo-counts: prior + expected topic counts,
            # which sum to the prior's total plus the document's length.
            mass = prior_rows.sum(axis=1)[doc_rows] + np.asarray(X.sum(axis=1)).ravel()
            theta *= mass[:, None]
        return theta.astype(dtype, copy=False)

    def _score_docs(self, X, groups, method):
        """Per-document completion log-likelihood and the number of tokens scored."""
        check_is_fitted(self)
        self._check_fitted(method)
        self._check_inference_params()
        X = check_counts(self, X, reset=False, method=method)
        prior_rows, doc_rows = self._inference_prior(groups, X.shape[0], method)
        parts = self._topic_word_parts(X)
        X_a, X_b = split_alternate(X)
        ll = np.zeros(X.shape[0])
        for observed, held_out in ((X_a, X_b), (X_b, X_a)):
            part = np.empty(X.shape[0])
            # By pieces of documents: their proportions are never all there.
            for lo, hi in budget_pieces(np.arange(X.shape[0] + 1), 8 * self._n_features_out):
                theta = self._fold_in(observed[lo:hi], prior_rows, doc_rows[lo:hi], parts)
                _sampling.parts_log_likelihood(*_csr_arrays(held_out[lo:hi]), theta, *parts,
                                               part[lo:hi])
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
        return perplexity_of(ll.sum(), n_tokens)

    # ------------------------------------------------------------------ misc
    @property
    def _n_features_out(self):
        """Number of transformed output features (topics)."""
        return self.components_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


def _n_kept(done, last, burn_in, thin):
    """How many of sweeps ``done + 1 .. last`` are kept: those after
    ``burn_in`` whose distance from it is a multiple of ``thin``."""
    if last <= burn_in:
        return 0
    return (last - burn_in) // thin - (max(done, burn_in) - burn_in) // thin


def _output_dtype(X):
    """float32 for float32 input (as scikit-learn's LDA), else float64; a
    DataFrame is float32 when all its columns are."""
    dtype = getattr(X, "dtype", None)
    if dtype is None and hasattr(X, "dtypes"):  # pandas
        kinds = set(X.dtypes)
        dtype = kinds.pop() if len(kinds) == 1 else None
    return np.float32 if dtype == np.float32 else np.float64


def _as_dtype(fitted, dtype):
    """The fitted topic and document arrays in the input's float dtype."""
    if dtype == np.float64:
        return fitted
    for name in ("components_", "doc_topic_"):
        fitted[name] = fitted[name].astype(dtype, copy=False)
    fitted["components_"] = _positive_topics(fitted["components_"])
    return fitted


#: What a fitted attribute checked by ``_check_fitted`` must hold: a test
#: of its values (as float64) and the words of the error.
_FITTED_RULES = {
    "positive": (lambda a: bool(np.isfinite(a).all() and (a > 0).all()) if isinstance(
                     a, np.ndarray) else math.isfinite(a) and a > 0,
                 "finite and positive"),
    "mixtures": (lambda a: bool(np.isfinite(a).all() and (a >= 0).all()
                                and (a.sum(axis=-1) > 0).all()),
                 "finite and non-negative with a positive sum in every row"),
    "sizes": (lambda a: bool(np.isfinite(a).all() and (a >= 0).all() and a.sum() > 0),
              "finite and non-negative with a positive total"),
}


def _is_real_array(value):
    """Whether ``value`` is a number or a NumPy array of real numbers."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biuf"
    return isinstance(value, (Real, np.number)) and not isinstance(value, complex)


def _described(value):
    """A short account of a value for an error message."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, Real):
        return repr(value)
    return f"a {type(value).__name__}"


def _positive_topics(components):
    """``components`` (made from positive float64 numbers) with every entry
    positive, in place: in float32 a topic-word prior below its smallest
    positive number (about 1.4e-45; priors go down to 1e-100) would round to
    0, and a topic without tokens would then be a row of zeros, whose
    probabilities are 0 / 0. Such entries are kept at that smallest number."""
    if components.dtype == np.float32:
        np.maximum(components, np.finfo(np.float32).smallest_subnormal, out=components)
    return components


def word_log_likelihood(nwk, nk, eta):
    """``log p(w | z)``: the topics' Dirichlet-multinomial terms, from the
    ``(V, K)`` word-topic counts ``nwk`` (a table or a sparse matrix) and
    the topic totals ``nk``."""
    K = nk.shape[0]
    V = nwk.shape[0]
    nz = nwk.data[nwk.data > 0] if sp.issparse(nwk) else nwk[positive_cells(nwk)]
    ll = K * gammaln(V * eta) - gammaln(nk + V * eta).sum()
    return ll + (gammaln(nz + eta) - gammaln(eta)).sum()


def doc_log_likelihood(ndk, doc_len, doc_group, prior):
    """``log p(z)``: the documents' Dirichlet-multinomial terms, each document
    with the prior row of its collection; a sum over documents, so the
    documents may be split into parts (:mod:`sklearn_clda.dask`'s shards).
    The ``(n_docs, K)`` tables of the prior rows are made by pieces only."""
    doc_group = np.asarray(doc_group)
    prior_sum = np.empty(ndk.shape[0])
    for lo, hi in _row_pieces(ndk):
        prior_sum[lo:hi] = prior[doc_group[lo:hi]].sum(axis=1)
    ll = (gammaln(prior_sum) - gammaln(doc_len + prior_sum)).sum()
    rows, cols = positive_cells(ndk)
    a = prior[doc_group[rows], cols]
    return ll + (gammaln(ndk[rows, cols] + a) - gammaln(a)).sum()


def _map_interruptibly(fn, items, n_threads):
    """Call ``fn(item, stop)`` on every item, on up to ``n_threads`` threads,
    so that Ctrl-C stops all of them within milliseconds.

    ``stop`` is a shared one-element int32 array that the kernels poll:
    when the main thread is interrupted (the kernel it runs raises
    ``KeyboardInterrupt``, or its wait for the threads does), it sets
    ``stop[0]``, the running items return early, the items not started are
    dropped, and the interrupt is re-raised.
    """
    stop = np.zeros(1, dtype=np.int32)
    if n_threads <= 1 or len(items) <= 1:
        for item in items:
            fn(item, stop)
        return

    def guarded(item):
        if not stop[0]:
            fn(item, stop)

    pool = ThreadPoolExecutor(n_threads)
    try:
        for future in [pool.submit(guarded, item) for item in items]:
            future.result()
    finally:
        stop[0] = 1
        pool.shutdown(wait=True, cancel_futures=True)


def _csr_arrays(X):
    """CSR arrays in the kernels' dtypes: indptr int64, indices int32, data float64."""
    return (
        np.ascontiguousarray(X.indptr, dtype=np.int64),
        np.ascontiguousarray(X.indices, dtype=np.int32),
        np.ascontiguousarray(X.data, dtype=np.float64),
    )
