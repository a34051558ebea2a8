"""The sampler state of one shard, built within a bounded amount of memory.

:class:`~sklearn_clda._sweeper._GibbsState` builds its count tables from
per-token 64-bit index arrays (16 bytes a token, twice); on a worker whose
shard has hundreds of millions of tokens those temporaries, not the state,
would set the peak memory. :func:`shard_state` fills the same attributes
(the sweeper reads nothing else) from the shard's token arrays (see
:func:`~sklearn_clda.dask._blocks.block_tokens`), counting in pieces of at
most :data:`~sklearn_clda.dask._blocks.PIECE` tokens, and draws the same
initial topics.
"""

import numpy as np

from .. import _sampling
from .._chunking import capped_bounds, pieces
from .._sweeper import _GibbsState
from ._blocks import PIECE

__all__ = ["shard_state"]


def shard_state(words, doc_ptr, n_features, doc_group, n_components, rng, draw=None):
    """A ``_GibbsState`` of the shard's tokens ``words`` (int32) and
    ``doc_ptr`` (int64), which it keeps (no copy).

    ``draw(words, doc_ptr)`` gives the initial topics (a rebuilt shard's);
    without it they are uniform, drawn from ``rng`` as ``_GibbsState`` does.
    """
    K = int(n_components)
    n_docs = doc_ptr.shape[0] - 1
    state = _GibbsState.__new__(_GibbsState)
    state.words, state.doc_ptr = words, doc_ptr
    state.n_features = n_features
    state.doc_group = np.ascontiguousarray(doc_group, dtype=np.int32)
    state.doc_len = np.diff(doc_ptr)
    if draw is None:
        state.z = rng.integers(0, K, size=words.shape[0], dtype=np.int32)
    else:
        state.z = draw(words, doc_ptr)
    K_pad = _sampling.padded_n_components(K)
    state.nwk_padded = _sampling._line_buffer(n_features * K_pad, np.int32).reshape(
        n_features, K_pad
    )
    state.nwk = state.nwk_padded[:, :K]
    state.ndk = np.zeros((n_docs, K), dtype=np.int32)
    for lo, hi in pieces(capped_bounds(doc_ptr, PIECE)):
        a, b = doc_ptr[lo], doc_ptr[hi]
        docs = np.repeat(np.arange(lo, hi, dtype=np.int32), state.doc_len[lo:hi])
        np.add.at(state.ndk, (docs, state.z[a:b]), 1)
        np.add.at(state.nwk, (words[a:b], state.z[a:b]), 1)
    # The totals from the table (a bincount of z would copy it as 64-bit indices).
    state.nk = state.nwk.sum(axis=0, dtype=np.int64).astype(np.int32)
    return state
