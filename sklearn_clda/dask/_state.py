"""The sampler state of one shard, built within a bounded amount of memory.

:class:`~sklearn_clda._sweeper._GibbsState` builds its count tables from
per-token 64-bit index arrays (16 bytes a token, twice); on a worker whose
shard has hundreds of millions of tokens those temporaries, not the state,
would set the peak memory. :func:`shard_state` fills the same attributes
(the sweeper reads nothing else) from the CSR counts with temporaries of
at most ``_CHUNK`` tokens, and draws the same initial topics.
"""

import numpy as np

from .. import _sampling
from .._sweeper import _GibbsState

__all__ = ["shard_state"]

# Tokens per piece when counting (a piece's indices are its only temporaries).
_CHUNK = 1 << 20


def _tokens(X):
    """``(words, doc_ptr)`` of canonical CSR counts (as ``csr_to_tokens``),
    without a 64-bit array per stored entry."""
    words = np.repeat(X.indices, X.data).astype(np.int32, copy=False)
    doc_len = np.zeros(X.shape[0], dtype=np.int64)
    for lo in range(0, X.shape[0], _CHUNK):
        hi = min(lo + _CHUNK, X.shape[0])
        a, b = X.indptr[lo], X.indptr[hi]
        rows = np.repeat(np.arange(hi - lo, dtype=np.int32), np.diff(X.indptr[lo : hi + 1]))
        doc_len[lo:hi] = np.bincount(rows, weights=X.data[a:b], minlength=hi - lo)
    doc_ptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
    np.cumsum(doc_len, out=doc_ptr[1:])
    return words, doc_ptr


def shard_state(X, doc_group, n_components, rng, draw=None):
    """A ``_GibbsState`` of the shard's counts ``X`` (canonical CSR).

    ``draw(words, doc_ptr)`` gives the initial topics (a rebuilt shard's);
    without it they are uniform, drawn from ``rng`` as ``_GibbsState`` does.
    """
    K = int(n_components)
    state = _GibbsState.__new__(_GibbsState)
    state.words, state.doc_ptr = _tokens(X)
    state.doc_group = np.ascontiguousarray(doc_group, dtype=np.int32)
    state.doc_len = np.diff(state.doc_ptr)
    n_tokens = state.words.shape[0]
    if draw is None:
        state.z = rng.integers(0, K, size=n_tokens, dtype=np.int32)
    else:
        state.z = draw(state.words, state.doc_ptr)
    K_pad = _sampling.padded_n_components(K)
    state.nwk_padded = _sampling._line_buffer(X.shape[1] * K_pad, np.int32).reshape(
        X.shape[1], K_pad
    )
    state.nwk = state.nwk_padded[:, :K]
    state.ndk = np.zeros((X.shape[0], K), dtype=np.int32)
    for lo in range(0, X.shape[0], _CHUNK // 64 or 1):
        hi = min(lo + (_CHUNK // 64 or 1), X.shape[0])
        a, b = state.doc_ptr[lo], state.doc_ptr[hi]
        docs = np.repeat(np.arange(lo, hi, dtype=np.int32), state.doc_len[lo:hi])
        np.add.at(state.ndk, (docs, state.z[a:b]), 1)
        np.add.at(state.nwk, (state.words[a:b], state.z[a:b]), 1)
    state.nk = np.bincount(state.z, minlength=K).astype(np.int32)
    return state
