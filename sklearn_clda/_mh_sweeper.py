"""The Metropolis-Hastings sweepers: the samplers for many topics.

:class:`_MHSweeper` runs the kernel ``_mh_sampling.mh_sweep`` (O(1) per
token) or ``_mh_sampling.sparse_mh_sweep`` (O(topics of the document)) over a
:class:`~sklearn_clda._sweeper._GibbsState` on one thread, and
``_mh_partition._MHPartitionedSweeper`` the partitioned scheme of
``_partition`` (``n_jobs``), both with the interface of
``_sweeper._ShardedSweeper`` (``sweep(prior, eta)`` returns the Antoniak
table sums, ``bit_states``/``set_bit_states``, ``shards``, a context
manager), so that the fit loop of ``_base`` runs any of them.
:func:`sampler_kernel` and :func:`auto_sampler` resolve the estimators'
``sampler`` parameter and :func:`make_mh_sweeper` picks the sweeper.
"""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import StrOptions

from . import _mh_sampling
from ._corpus import StrictInterval
from ._mh_partition import _MHPartitionedSweeper
from ._streams import ShardStreams
from ._sweeper import _n_threads

__all__ = [
    "AUTO_DENSE_MAX_COMPONENTS", "AUTO_MH_MIN_COMPONENTS", "AUTO_SPARSE_LENGTH_FACTOR",
    "SAMPLER_CONSTRAINTS", "_MHSweeper", "auto_sampler", "make_mh_sweeper", "sampler_kernel",
]

# Most MH steps per token (a document's uniforms are drawn together, 3 per step).
MAX_MH_STEPS = 1000
# The estimators' ``_parameter_constraints`` entries of the sampler settings.
SAMPLER_CONSTRAINTS = {
    "sampler": [StrOptions({"auto", "dense", "mh", "sparse"})],
    "mh_steps": [StrictInterval(Integral, 1, MAX_MH_STEPS, closed="both")],
}
# sampler="auto" (see ``auto_sampler``): the dense kernel up to this many
# topics, whatever the corpus;
AUTO_DENSE_MAX_COMPONENTS = 100
# the sparse kernel from this many times the corpus's token-weighted mean
# document length on (its cost grows with the topics per document, at most
# the document length; the dense kernel's with K). One factor for every CPU,
# between the crossovers measured (user guide, "Many topics": K = 510-520 on
# news16, 3.3 times its length 157, on an Intel Xeon VM);
AUTO_SPARSE_LENGTH_FACTOR = 3.0
# the O(1) MH kernel from this many topics on (on news16 a sparse sweep costs
# 2.1 MH sweeps at K = 10,000 and 2.5 at 20,000 since it keeps no word-topic
# table, 3.0 and 3.9 before; fewer than the 5-8 times the sweeps MH needs at
# K = 1000, so the sparse one is used up to the largest K measured; MH's
# cost grows neither with K nor with the document lengths). See the user
# guide, "Many topics".
AUTO_MH_MIN_COMPONENTS = 20_000


def token_weighted_length(doc_len):
    """The mean document length over tokens, ``sum(L**2) / sum(L)``: the
    length of the document of a random token."""
    L = np.asarray(doc_len, dtype=np.float64)
    total = L.sum()
    return float((L * L).sum() / total) if total > 0 else 0.0


def auto_sampler(n_components, doc_len):
    """The kernel ``sampler="auto"`` runs: "dense", "sparse" or "mh" ("mh"
    instead of "sparse" when a document is longer than the sparse kernel's
    lists allow at this K: ``_mh_sampling.sparse_max_document_length``)."""
    if n_components <= AUTO_DENSE_MAX_COMPONENTS:
        return "dense"
    if n_components >= AUTO_MH_MIN_COMPONENTS:
        return "mh"
    if n_components >= AUTO_SPARSE_LENGTH_FACTOR * token_weighted_length(doc_len):
        longest = np.max(doc_len) if len(doc_len) else 0
        return "sparse" if longest <= _mh_sampling.sparse_max_document_length(
            n_components) else "mh"
    return "dense"


def sampler_kernel(sampler, n_components, X):
    """The kernel that ``sampler`` ("auto", "dense", "mh" or "sparse") runs at
    this K on the count matrix ``X`` ("auto": :func:`auto_sampler` of its
    documents' lengths). Raises ``ValueError`` for "sparse" on documents
    longer than its lists allow at this K."""
    if sampler == "auto":
        return auto_sampler(n_components, np.asarray(X.sum(axis=1)).ravel())
    if sampler == "sparse":
        _mh_sampling.check_sparse_document_lengths(np.asarray(X.sum(axis=1)).ravel(),
                                                   n_components)
    return sampler


def make_mh_sweeper(state, n_shards, seed_sequence, n_table_rows, mh_steps, sampler="mh"):
    """The sweeper of a fit with ``sampler`` "mh" or "sparse" (the sparse one
    runs on a state with or without a word-topic table): serial for one
    shard, partitioned for more."""
    if n_shards > 1:
        return _MHPartitionedSweeper(state, n_shards, seed_sequence, n_table_rows, mh_steps,
                                     _n_threads(n_shards), kernel=sampler)
    return _MHSweeper(state, seed_sequence, n_table_rows, mh_steps, kernel=sampler)


# The serial sweep of each MH kernel (the same arguments).
_SERIAL_SWEEPS = {"mh": _mh_sampling.mh_sweep, "sparse": _mh_sampling.sparse_mh_sweep}


class _MHSweeper(ShardStreams):
    """Runs MH sweeps over all documents on one thread: the exact sampler.

    ``kernel``: ``"mh"`` (``_mh_kernel.h``) or ``"sparse"``
    (``_sparse_mh_kernel.h``)."""

    def __init__(self, state, seed_sequence, n_table_rows, mh_steps, kernel="mh"):
        self.state = state
        self.mh_steps = int(mh_steps)
        self.kernel = kernel
        K = state.nk.shape[0]
        self.shards = [dict(
            bitgen=np.random.PCG64(seed_sequence),
            tables=np.zeros((n_table_rows, K), dtype=np.int64),
        )]
        self.refresh_word_index()

    def refresh_word_index(self):
        """Rebuild the tokens-by-word index from ``state.words`` (done once per
        fit; again only if the words change, as in the Geweke tests)."""
        V = self.state.n_features
        self.word_ptr, self.word_tokens = _mh_sampling.word_index(self.state.words, V)
        if self.kernel == "sparse":  # the word order's index and working arrays
            self.extra = {"workspace": _mh_sampling.sparse_workspace(
                self.state.doc_ptr, self.word_ptr, self.word_tokens, self.state.nk.shape[0],
                self.mh_steps)}
        else:  # the tokens' places in word order (the kernel's copy of z in
            # word order is taken per sweep)
            self.extra = {"word_pos": _mh_sampling.word_positions(self.word_tokens)}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def sweep(self, prior, eta):
        """One sweep over all documents; returns the summed Antoniak table counts."""
        st, shard = self.state, self.shards[0]
        shard["tables"].fill(0)
        _SERIAL_SWEEPS[self.kernel](
            st.words, st.doc_ptr, st.doc_group, st.z, st.nwk_padded, st.ndk, st.nk,
            prior, eta, self.word_ptr, self.word_tokens, self.mh_steps,
            shard["tables"], shard["bitgen"], **self.extra,
        )
        return shard["tables"]
