"""The Metropolis-Hastings sweepers: the O(1)-per-token sampler for many topics.

:class:`_MHSweeper` runs the kernel ``_mh_sampling.mh_sweep`` over a
:class:`~sklearn_clda._sweeper._GibbsState` on one thread, and
``_mh_partition._MHPartitionedSweeper`` the partitioned scheme of
``_partition`` (``n_jobs``), both with the interface of
``_sweeper._ShardedSweeper`` (``sweep(prior, eta)`` returns the Antoniak
table sums, ``bit_states``/``set_bit_states``, ``shards``, a context
manager), so that the fit loop of ``_base`` runs any of them.
:func:`uses_mh` resolves the estimators' ``sampler`` parameter and
:func:`make_mh_sweeper` picks the sweeper.
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
    "AUTO_MH_MIN_COMPONENTS", "SAMPLER_CONSTRAINTS", "_MHSweeper", "make_mh_sweeper", "uses_mh",
]

# Most MH steps per token (a document's uniforms are drawn together, 3 per step).
MAX_MH_STEPS = 1000
# The estimators' ``_parameter_constraints`` entries of the sampler settings.
SAMPLER_CONSTRAINTS = {
    "sampler": [StrOptions({"auto", "dense", "mh", "sparse"})],
    "mh_steps": [StrictInterval(Integral, 1, MAX_MH_STEPS, closed="both")],
}
# sampler="auto" runs the MH kernel from this many topics on, the dense one
# below: where the MH sweep's speed-up over the dense one (5.4x at K = 1000,
# 38x at 10,000 on news16, about linear in K) outgrows the ~8x more sweeps
# it needed to reach the same held-out perplexity at K = 1000 (see the
# user guide, "Many topics").
AUTO_MH_MIN_COMPONENTS = 2000


def uses_mh(sampler, n_components):
    """Whether ``sampler`` ("auto", "dense", "mh" or "sparse") runs an MH kernel at this K."""
    if sampler == "auto":
        return n_components >= AUTO_MH_MIN_COMPONENTS
    return sampler in ("mh", "sparse")


def make_mh_sweeper(state, n_shards, seed_sequence, n_table_rows, mh_steps, sampler="mh"):
    """The MH sweeper of a fit: serial for one shard, partitioned for more;
    ``sampler`` "mh" or "sparse" picks the kernel ("auto": "mh")."""
    if sampler == "auto":
        sampler = "mh"
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
        V = self.state.nwk_padded.shape[0]
        self.word_ptr, self.word_tokens = _mh_sampling.word_index(self.state.words, V)
        # The sparse kernel's tokens' places in word order (its copy of z in
        # word order is taken per sweep).
        self.extra = ({"word_pos": _mh_sampling.word_positions(self.word_tokens)}
                      if self.kernel == "sparse" else {})

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
