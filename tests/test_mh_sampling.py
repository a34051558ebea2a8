"""The MH kernel (``_mh_sampling``) against its NumPy reference and the exact posterior."""

import itertools

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln
from test_sampling import (
    _random_state,
    _reference_binomial_tables,
    _reference_tables,
    _reference_uniforms,
)

from sklearn_clda import _mh_sampling, _sampling


# ---------------------------------------------------------------- reference
def _reference_alias(a):
    """Vose's construction as stated in ``build_alias_tables``' docstring."""
    K = len(a)
    total = 0.0
    for x in a:
        total += float(x)
    q = [float(x) * (K / total) for x in a]
    small = [k for k in range(K) if q[k] < 1.0]
    large = [k for k in range(K) if q[k] >= 1.0]
    prob, alias = [1.0] * K, list(range(K))
    while small and large:
        s, l = small.pop(), large.pop()
        prob[s], alias[s] = q[s], l
        q[l] = (q[l] + q[s]) - 1.0
        (small if q[l] < 1.0 else large).append(l)
    return prob, alias, total


def _reference_mh_token(s, i, d, U, doc_toks, index, aliases, eta, mh_steps):
    """The MH steps of token ``i`` of document ``d`` (whose tokens are
    ``doc_toks``) with its uniforms ``U``, as in ``mh_sweep``'s docstring."""
    words, z, nwk, ndk, nk, prior = (s[k] for k in ("words", "z", "nwk", "ndk", "nk", "prior"))
    V, K = nwk.shape[0], nk.shape[0]
    word_ptr, word_tokens = index
    g = s["doc_group"][d]
    prob, alias, total = aliases[g]
    w, s_ = words[i], int(z[i])
    ndk[d, s_] -= 1
    nwk[w, s_] -= 1
    nk[s_] -= 1
    n_w, L = int(word_ptr[w + 1] - word_ptr[w]), len(doc_toks)
    for j in range(mh_steps):
        u0, u1, u2 = (float(x) for x in U[3 * j : 3 * j + 3])
        if j % 2 == 0:
            x = u0 * (n_w + K * eta)
            if x < n_w:
                t = int(z[word_tokens[word_ptr[w] + int(x)]])
            else:
                t = min(int(u1 * K), K - 1)
            num = (int(ndk[d, t]) + prior[g, t]) * (int(nk[s_]) + V * eta)
            den = (int(ndk[d, s_]) + prior[g, s_]) * (int(nk[t]) + V * eta)
        else:
            x = u0 * (L + total)
            if x < L:
                t = int(z[doc_toks[int(x)]])
            else:
                c = min(int(u1 * K), K - 1)
                t = c if u1 * K - c < prob[c] else alias[c]
            num = (int(nwk[w, t]) + eta) * (int(nk[s_]) + V * eta)
            den = (int(nwk[w, s_]) + eta) * (int(nk[t]) + V * eta)
        if t != s_ and u2 * den < num:
            s_ = t
            z[i] = t
    ndk[d, s_] += 1
    nwk[w, s_] += 1
    nk[s_] += 1


def _blocked_running_sums(p):
    """Running sums of ``p`` as ``clda_smh_running_sums`` adds them (blocks of 4)."""
    n = len(p)
    P = np.zeros(-(-n // 4) * 4)
    P[:n] = p
    S = np.cumsum(P.reshape(-1, 4), axis=1)
    return (np.r_[0.0, np.cumsum(S[:, 3])[:-1]][:, None] + S).ravel()[:n]


def _doc_lists(z, doc_ptr, doc_tokens=None):
    """Each document's topic list at the start of a sparse sweep: its
    tokens' distinct topics in the order of their first token."""
    D = len(doc_ptr) - 1
    toks = [np.arange(doc_ptr[d], doc_ptr[d + 1]) if doc_tokens is None
            else doc_tokens[doc_ptr[d] : doc_ptr[d + 1]] for d in range(D)]
    return [list(dict.fromkeys(int(k) for k in z[t])) for t in toks]


def _reference_sparse_token(s, j, d, U, lists, inv, c, index, eta, mh_steps):
    """The sparse MH steps of the token at word position ``j`` (document
    ``d``, whose topic list is ``lists[d]``; ``inv`` and ``c`` kept by the
    caller), as in ``sparse_mh_sweep``'s docstring."""
    words, z, nwk, ndk, nk, prior = (s[k] for k in ("words", "z", "nwk", "ndk", "nk", "prior"))
    V, K = nwk.shape[0], nk.shape[0]
    word_ptr, word_tokens = index
    i = int(word_tokens[j])
    g, L = s["doc_group"][d], lists[d]
    w, s0 = words[i], int(z[i])
    ndk[d, s0] -= 1
    nwk[w, s0] -= 1
    nk[s0] -= 1
    inv[s0] = 1.0 / (nk[s0] + V * eta)
    n_w = int(word_ptr[w + 1] - word_ptr[w])
    cum = _blocked_running_sums(((nwk[w, L] + eta) * inv[L]) * ndk[d, L])
    A = cum[-1] if L else 0.0
    total = A + c[g] * (n_w + K * eta)
    s_ = s0
    for r in range(mh_steps):
        u0, u1 = U[2 * r : 2 * r + 2]
        x = u0 * total
        if x < A:
            t = L[int(np.searchsorted(cum, x, side="right"))]
        else:
            y = (x - A) / c[g]
            if y < n_w:
                t = int(z[word_tokens[word_ptr[w] + int(y)]])
            else:
                t = min(int((y - n_w) / eta), K - 1)
        ps = (ndk[d, s_] + prior[g, s_]) * inv[s_]
        qs = ndk[d, s_] * inv[s_] + c[g]
        pt = (ndk[d, t] + prior[g, t]) * inv[t]
        qt = ndk[d, t] * inv[t] + c[g]
        if t != s_ and u1 * (ps * qt) < pt * qs:
            s_ = t
            z[i] = t
    if s_ != s0:
        if ndk[d, s0] == 0:
            m = L.index(s0)
            L[m] = L[-1]
            L.pop()
        if s_ not in L:
            L.append(s_)
    ndk[d, s_] += 1
    nwk[w, s_] += 1
    nk[s_] += 1
    inv[s_] = 1.0 / (nk[s_] + V * eta)


def _reference_sparse_sweep(s, eta, mh_steps, tables, gen):
    """The NumPy equivalent stated in ``sparse_mh_sweep``'s docstring."""
    doc_ptr, V = s["doc_ptr"], s["nwk"].shape[0]
    c = (s["prior"] * (1.0 / (s["nk"] + V * eta))).mean(axis=1)
    inv = 1.0 / (s["nk"] + V * eta)
    index = _mh_sampling.word_index(s["words"], V)
    doc_of = np.repeat(np.arange(len(doc_ptr) - 1), np.diff(doc_ptr))
    lists = _doc_lists(s["z"], doc_ptr)
    if len(s["words"]):
        key = int(gen.bit_generator.random_raw())  # one per call
        U = _reference_uniforms(key, 0, 2 * mh_steps * len(s["words"]))
    for j, i in enumerate(index[1]):
        u = U[2 * mh_steps * j :][: 2 * mh_steps]
        _reference_sparse_token(s, j, doc_of[i], u, lists, inv, c, index, eta, mh_steps)
    if tables.shape[0]:
        _reference_tables_of(s["ndk"], s["doc_group"], s["prior"], tables, gen)


def _reference_tables_of(ndk, doc_group, prior, tables, gen):
    """AGS's table draws from final counts (``_sampling.document_tables``)."""
    K = ndk.shape[1]
    hist = np.zeros((tables.shape[0], K, 64), dtype=np.int64)
    for d in range(ndk.shape[0]):
        g = doc_group[d]
        for k in range(K):
            n = ndk[d, k]
            if n >= 64:
                tables[g, k] += _reference_tables(n, prior[g, k], gen)
            else:
                hist[g, k, n] += 1
    _reference_binomial_tables(hist, prior, tables, gen)


def _reference_mh_sweep(s, eta, mh_steps, tables, gen):
    """The NumPy equivalent stated in ``mh_sweep``'s docstring."""
    doc_ptr = s["doc_ptr"]
    aliases = [_reference_alias(row) for row in s["prior"]]
    index = _mh_sampling.word_index(s["words"], s["nwk"].shape[0])
    key = int(gen.bit_generator.random_raw())
    for d in range(len(doc_ptr) - 1):
        i0, i1 = int(doc_ptr[d]), int(doc_ptr[d + 1])
        U = _reference_uniforms(key, 3 * mh_steps * i0, 3 * mh_steps * (i1 - i0))
        for i in range(i0, i1):
            u = U[3 * mh_steps * (i - i0) :][: 3 * mh_steps]
            _reference_mh_token(s, i, d, u, np.arange(i0, i1), index, aliases, eta, mh_steps)
    if tables.shape[0]:
        _reference_tables_of(s["ndk"], s["doc_group"], s["prior"], tables, gen)


def _kernel_mh_sweep(s, eta, mh_steps, tables, bitgen, nwk=None, kernel="mh"):
    nwk = s["nwk"] if nwk is None else nwk
    word_ptr, word_tokens = _mh_sampling.word_index(s["words"], nwk.shape[0])
    _SWEEPS[kernel][0](s["words"], s["doc_ptr"], s["doc_group"], s["z"], nwk, s["ndk"],
                          s["nk"], s["prior"], eta, word_ptr, word_tokens, mh_steps, tables,
                          bitgen)


# Each MH kernel and its NumPy reference.
_SWEEPS = {
    "mh": (_mh_sampling.mh_sweep, _reference_mh_sweep),
    "sparse": (_mh_sampling.sparse_mh_sweep, _reference_sparse_sweep),
}
KERNELS = list(_SWEEPS)


def _copy(s):
    return {k: v.copy() for k, v in s.items()}


# ------------------------------------------------------- bit for bit
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("K", [1, 3, 11])
@pytest.mark.parametrize("mh_steps", [1, 2, 5])
@pytest.mark.parametrize("kernel", KERNELS)
def test_mh_sweep_matches_numpy_reference_exactly(seed, K, mh_steps, kernel):
    s = _random_state(seed, n_docs=8, n_features=6, K=K, n_groups=3, max_len=12)
    ref = _copy(s)
    with_tables = seed % 2 == 1
    rows = s["prior"].shape[0] if with_tables else 0
    t_kernel = np.zeros((rows, K), dtype=np.int64)
    t_ref = np.zeros((rows, K), dtype=np.int64)
    bitgen, gen = np.random.PCG64(seed), np.random.Generator(np.random.PCG64(seed))
    for _ in range(3):
        _kernel_mh_sweep(s, 0.3, mh_steps, t_kernel, bitgen, kernel=kernel)
        _SWEEPS[kernel][1](ref, 0.3, mh_steps, t_ref, gen)
        for name in ("z", "nwk", "ndk", "nk"):
            np.testing.assert_array_equal(s[name], ref[name], err_msg=name)
        np.testing.assert_array_equal(t_kernel, t_ref)
    # the streams are in the same place afterwards
    assert bitgen.random_raw() == gen.bit_generator.random_raw()


@pytest.mark.parametrize("kernel", KERNELS)
def test_mh_sweep_moves_tokens_and_keeps_counts_consistent(kernel):
    s = _random_state(5, n_docs=20, n_features=9, K=6, n_groups=2, max_len=15)
    z0 = s["z"].copy()
    _kernel_mh_sweep(s, 0.2, 2, np.zeros((0, 6), dtype=np.int64), np.random.PCG64(1),
                     kernel=kernel)
    assert (s["z"] != z0).mean() > 0.2  # the steps are not all rejected
    doc_of = np.repeat(np.arange(20), np.diff(s["doc_ptr"]))
    ndk = np.zeros_like(s["ndk"])
    np.add.at(ndk, (doc_of, s["z"]), 1)
    np.testing.assert_array_equal(s["ndk"], ndk)
    np.testing.assert_array_equal(s["nk"], np.bincount(s["z"], minlength=6))


@pytest.mark.parametrize("kernel", KERNELS)
def test_mh_sweep_on_padded_rows_matches_unpadded(kernel):
    # The estimators pass the padded, aligned table of _GibbsState.
    s = _random_state(2, n_docs=8, n_features=6, K=5, n_groups=2, max_len=12)
    ref = _copy(s)
    padded = np.zeros((6, _sampling.padded_n_components(5)), dtype=np.int32)
    padded[:, :5] = s["nwk"]
    tables = np.zeros((0, 5), dtype=np.int64)
    _kernel_mh_sweep(s, 0.3, 2, tables, np.random.PCG64(3), nwk=padded, kernel=kernel)
    _kernel_mh_sweep(ref, 0.3, 2, tables, np.random.PCG64(3), kernel=kernel)
    np.testing.assert_array_equal(s["z"], ref["z"])
    np.testing.assert_array_equal(padded[:, :5], ref["nwk"])
    assert not padded[:, 5:].any()


@pytest.mark.parametrize("kernel", KERNELS)
def test_mh_sweep_tables_with_long_documents_match_reference(kernel):
    # Counts of 64 and more take the crp_tables path.
    rng = np.random.default_rng(0)
    lengths = np.array([150, 90, 3, 70])
    doc_ptr = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    N, K, V = int(doc_ptr[-1]), 2, 4
    words = rng.integers(0, V, N).astype(np.int32)
    z = rng.integers(0, K, N).astype(np.int32)
    doc_of = np.repeat(np.arange(4), lengths)
    nwk = np.zeros((V, K), dtype=np.int32)
    ndk = np.zeros((4, K), dtype=np.int32)
    np.add.at(nwk, (words, z), 1)
    np.add.at(ndk, (doc_of, z), 1)
    s = dict(words=words, doc_ptr=doc_ptr, doc_group=np.array([0, 1, 0, 1], dtype=np.int32),
             z=z, nwk=nwk, ndk=ndk, nk=np.bincount(z, minlength=K).astype(np.int32),
             prior=np.array([[0.5, 2.0], [1.0, 0.1]]))
    ref = _copy(s)
    t1, t2 = np.zeros((2, K), dtype=np.int64), np.zeros((2, K), dtype=np.int64)
    _kernel_mh_sweep(s, 0.1, 2, t1, np.random.PCG64(4), kernel=kernel)
    _SWEEPS[kernel][1](ref, 0.1, 2, t2, np.random.Generator(np.random.PCG64(4)))
    assert (s["ndk"] >= 64).any()
    np.testing.assert_array_equal(s["z"], ref["z"])
    np.testing.assert_array_equal(t1, t2)


# ------------------------------------------------------------ alias tables
@pytest.mark.parametrize("K", [1, 2, 7, 50])
def test_alias_tables_match_reference_and_their_distribution(K):
    rng = np.random.default_rng(K)
    prior = rng.gamma(0.3, size=(3, K)) + 1e-3
    prior[1] = 0.5  # symmetric row
    prob, alias, totals = _mh_sampling.build_alias_tables(prior)
    for g in range(3):
        p_ref, a_ref, t_ref = _reference_alias(prior[g])
        np.testing.assert_array_equal(prob[g], p_ref)
        np.testing.assert_array_equal(alias[g], a_ref)
        assert totals[g] == t_ref
        # implied probabilities: (prob[k] + sum of 1 - prob[c] over c aliased to k) / K
        implied = prob[g].copy()
        np.add.at(implied, alias[g], 1.0 - prob[g])
        np.testing.assert_allclose(implied / K, prior[g] / prior[g].sum(), rtol=1e-12,
                                   atol=1e-15)


def test_mh_uniforms_are_splitmix64_and_match_the_reference():
    # SplitMix64's published outputs from state 0 (key 0, counters 0, 1, ...)
    expected = [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F, 0xF88BB8A8724C81EC]
    np.testing.assert_array_equal(_mh_sampling.mh_uniforms(0, 0, 4),
                                  [(x >> 11) * 2.0**-53 for x in expected])
    for key, start, n in [(0, 3, 1), (2**64 - 1, 2**40, 1000), (12345, 7, 0)]:
        np.testing.assert_array_equal(_mh_sampling.mh_uniforms(key, start, n),
                                      _reference_uniforms(key, start, n))
    # uniform on [0, 1), and the keys give different streams
    u = _mh_sampling.mh_uniforms(42, 0, 100_000)
    assert 0.0 <= u.min() and u.max() < 1.0
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 0.02
    assert not np.isin(_mh_sampling.mh_uniforms(43, 0, 1000), u).any()
    with pytest.raises(ValueError, match="non-negative"):
        _mh_sampling.mh_uniforms(0, 0, -1)


@pytest.fixture
def portable_fill():
    """The MH kernel's uniforms filled by the portable loop (not AVX-512)."""
    old = _mh_sampling._set_fill("portable")
    yield
    _mh_sampling._set_fill(old)


def test_mh_uniforms_portable_fill_gives_the_same_doubles():
    # every length and start around the vector widths, and a long run
    wide = [_mh_sampling.mh_uniforms(7, start, n) for start in range(9) for n in range(20)]
    wide.append(_mh_sampling.mh_uniforms(2**63 + 5, 10**12, 100_003))
    old = _mh_sampling._set_fill("portable")
    try:
        assert _mh_sampling._set_fill("portable") == "portable"
        narrow = [_mh_sampling.mh_uniforms(7, start, n) for start in range(9)
                  for n in range(20)]
        narrow.append(_mh_sampling.mh_uniforms(2**63 + 5, 10**12, 100_003))
    finally:
        _mh_sampling._set_fill(old)
    for a, b in zip(wide, narrow):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="unknown fill"):
        _mh_sampling._set_fill("avx512")


@pytest.mark.parametrize("mh_steps", [1, 2, 3])
def test_mh_sweep_with_the_portable_fill_matches_numpy_reference(portable_fill, mh_steps):
    s = _random_state(mh_steps, n_docs=8, n_features=6, K=7, n_groups=3, max_len=12)
    ref = _copy(s)
    tables = np.zeros((3, 7), dtype=np.int64)
    t_ref = tables.copy()
    bitgen, gen = np.random.PCG64(mh_steps), np.random.Generator(np.random.PCG64(mh_steps))
    for _ in range(2):
        _kernel_mh_sweep(s, 0.3, mh_steps, tables, bitgen)
        _reference_mh_sweep(ref, 0.3, mh_steps, t_ref, gen)
    for name in ("z", "nwk", "ndk", "nk"):
        np.testing.assert_array_equal(s[name], ref[name], err_msg=name)
    np.testing.assert_array_equal(tables, t_ref)


def test_word_index_groups_tokens_by_word():
    words = np.array([3, 0, 3, 1, 0, 3], dtype=np.int32)
    ptr, tok = _mh_sampling.word_index(words, 5)
    np.testing.assert_array_equal(ptr, [0, 2, 3, 3, 6, 6])
    np.testing.assert_array_equal(tok, [1, 4, 3, 0, 2, 5])
    with pytest.raises(ValueError, match="word ids"):
        _mh_sampling.word_index(words, 3)
    # int32 positions (a corpus has fewer than 2**31 tokens), and each
    # token's place in word order is their inverse
    assert ptr.dtype == np.int64 and tok.dtype == np.int32
    pos = _mh_sampling.word_positions(tok)
    assert pos.dtype == np.int32
    np.testing.assert_array_equal(pos[tok], np.arange(len(words)))
    with pytest.raises(ValueError, match="outside"):
        _mh_sampling.word_positions(np.array([0, 6], dtype=np.int32))


def test_gather_and_scatter_are_their_numpy_equivalents():
    rng = np.random.default_rng(0)
    values = rng.integers(-5, 100, 50).astype(np.int32)
    index = rng.integers(0, 50, 80).astype(np.int32)
    out = np.empty(80, dtype=np.int32)
    _mh_sampling.gather(values, index, out)
    np.testing.assert_array_equal(out, values[index])
    perm = rng.permutation(50).astype(np.int32)
    got, want = np.zeros(50, dtype=np.int32), np.zeros(50, dtype=np.int32)
    _mh_sampling.scatter(got, perm, values)
    want[perm] = values
    np.testing.assert_array_equal(got, want)
    # out of range or of another length: a ValueError, the output untouched
    for bad in (np.array([0, 50], dtype=np.int32), np.array([-1, 0], dtype=np.int32)):
        with pytest.raises(ValueError, match="outside"):
            _mh_sampling.gather(values, bad, np.empty(2, dtype=np.int32))
        before = got.copy()
        with pytest.raises(ValueError, match="outside"):
            _mh_sampling.scatter(got, bad, values[:2])
        np.testing.assert_array_equal(got, before)
    with pytest.raises(ValueError, match="same length"):
        _mh_sampling.gather(values, index, np.empty(3, dtype=np.int32))
    with pytest.raises(ValueError, match="same length"):
        _mh_sampling.scatter(got, perm, values[:3])


# -------------------------------------------------- exact posterior invariance
# A corpus small enough to enumerate every assignment: two collections with
# different asymmetric priors, two documents, five tokens, K = 3 (243 states).
_TINY_WORDS = np.array([0, 1, 0, 1, 1], dtype=np.int32)
_TINY_PTR = np.array([0, 3, 5], dtype=np.int64)
_TINY_GROUP = np.array([0, 1], dtype=np.int32)
_TINY_PRIOR = np.array([[0.3, 1.2, 0.6], [2.0, 0.2, 0.5]])
_TINY_ETA, _TINY_V, _TINY_K = 0.4, 3, 3


def _tiny_counts(z):
    K, V = _TINY_K, _TINY_V
    doc_of = np.repeat(np.arange(2), np.diff(_TINY_PTR))
    nwk = np.zeros((V, K), dtype=np.int32)
    ndk = np.zeros((2, K), dtype=np.int32)
    np.add.at(nwk, (_TINY_WORDS, z), 1)
    np.add.at(ndk, (doc_of, z), 1)
    return nwk, ndk, np.bincount(z, minlength=K).astype(np.int32)


def _tiny_posterior():
    """All assignments and their exact collapsed posterior p(z | w)."""
    K, V, eta = _TINY_K, _TINY_V, _TINY_ETA
    states = np.array(list(itertools.product(range(K), repeat=5)), dtype=np.int32)
    logp = np.empty(len(states))
    for n, z in enumerate(states):
        nwk, ndk, nk = _tiny_counts(z)
        a = _TINY_PRIOR[_TINY_GROUP]
        logp[n] = ((gammaln(nwk + eta) - gammaln(eta)).sum() - gammaln(nk + V * eta).sum()
                   + (gammaln(ndk + a) - gammaln(a)).sum()
                   - gammaln(ndk.sum(axis=1) + a.sum(axis=1)).sum())
    p = np.exp(logp - logp.max())
    return states, p / p.sum()


def _pooled_chisquare_pvalue(observed, expected_p, min_expected=5.0):
    """Chi-square p-value, cells with a small expected count pooled into one."""
    expected = expected_p * observed.sum()
    small = expected < min_expected
    obs = np.r_[observed[~small], observed[small].sum()]
    exp = np.r_[expected[~small], expected[small].sum()]
    keep = exp > 0
    return stats.chisquare(obs[keep], exp[keep]).pvalue


def _one_sweep_from_posterior(mh_steps, n_draws, seed, kernel="mh"):
    """State index after one MH sweep from each of n_draws exact posterior draws."""
    states, p = _tiny_posterior()
    rng = np.random.default_rng(seed)
    bitgen = np.random.PCG64(seed + 1)
    word_ptr, word_tokens = _mh_sampling.word_index(_TINY_WORDS, _TINY_V)
    tables = np.zeros((0, _TINY_K), dtype=np.int64)
    radix = _TINY_K ** np.arange(4, -1, -1)
    out = np.empty(n_draws, dtype=np.int64)
    for t, start in enumerate(rng.choice(len(states), size=n_draws, p=p)):
        z = states[start].copy()
        nwk, ndk, nk = _tiny_counts(z)
        _SWEEPS[kernel][0](_TINY_WORDS, _TINY_PTR, _TINY_GROUP, z, nwk, ndk, nk,
                           _TINY_PRIOR, _TINY_ETA, word_ptr, word_tokens, mh_steps,
                           tables, bitgen)
        out[t] = z @ radix
    return np.bincount(out, minlength=len(states)), p


@pytest.mark.parametrize("mh_steps", [1, 2, 3])
@pytest.mark.parametrize("kernel", KERNELS)
def test_one_mh_sweep_leaves_exact_posterior_invariant(mh_steps, kernel):
    # Start from exact posterior draws: after one sweep (each token one
    # kernel per MH step), the states must still follow p(z | w). With one
    # step only the word proposal runs, with two both, with three both and
    # the word step again. Also the transition is no identity: the state
    # changes in a good fraction of draws.
    observed, p = _one_sweep_from_posterior(mh_steps, 30_000, seed=mh_steps, kernel=kernel)
    assert _pooled_chisquare_pvalue(observed, p) > 1e-3
    # Power: the same counts against a slightly different posterior (the
    # topic totals' Vη halved) are rejected.
    wrong = _tiny_posterior_with_eta_total(_TINY_V * _TINY_ETA / 2)
    assert _pooled_chisquare_pvalue(observed, wrong) < 1e-6


def _tiny_posterior_with_eta_total(veta):
    """The tiny posterior with V*eta replaced by ``veta`` in the topic totals."""
    states, _ = _tiny_posterior()
    logp = np.empty(len(states))
    for n, z in enumerate(states):
        nwk, ndk, nk = _tiny_counts(z)
        a = _TINY_PRIOR[_TINY_GROUP]
        logp[n] = ((gammaln(nwk + _TINY_ETA)).sum() - gammaln(nk + veta).sum()
                   + (gammaln(ndk + a)).sum())
    q = np.exp(logp - logp.max())
    return q / q.sum()


@pytest.mark.parametrize("kernel", KERNELS)
def test_many_mh_steps_converge_to_the_token_conditional(kernel):
    # Token 0 is the first of the sweep (in document order, and in word
    # order: its word is word 0), so all its MH steps run with every other
    # token at its start value (the later tokens never write z[0]): after
    # many steps from the same start, z[0] follows the exact conditional
    # given the others (the chi-square test of the per-token transition).
    # Word 0 has tokens in both documents, so both proposals' token picks
    # matter.
    K, V, eta = 4, 3, 0.3
    words = np.array([0, 2, 0, 1, 0, 2], dtype=np.int32)
    z0 = np.array([0, 1, 3, 3, 2, 1], dtype=np.int32)
    doc_ptr = np.array([0, 4, 6], dtype=np.int64)
    doc_group = np.array([0, 1], dtype=np.int32)
    prior = np.array([[0.2, 0.9, 0.4, 1.5], [1.0, 0.1, 0.3, 0.6]])
    doc_of = np.repeat([0, 1], [4, 2])
    nwk = np.zeros((V, K), dtype=np.int32)
    ndk = np.zeros((2, K), dtype=np.int32)
    np.add.at(nwk, (words, z0), 1)
    np.add.at(ndk, (doc_of, z0), 1)
    nk = np.bincount(z0, minlength=K).astype(np.int32)
    n_d, n_w, n_k = ndk[0].astype(float), nwk[0].astype(float), nk.astype(float)
    n_d[0] -= 1
    n_w[0] -= 1
    n_k[0] -= 1
    exact = (n_d + prior[0]) * (n_w + eta) / (n_k + V * eta)
    exact /= exact.sum()
    word_ptr, word_tokens = _mh_sampling.word_index(words, V)
    bitgen = np.random.PCG64(0)
    tables = np.zeros((0, K), dtype=np.int64)
    n_draws = 20_000
    draws = np.empty(n_draws, dtype=np.int64)
    for t in range(n_draws):
        z = z0.copy()
        _SWEEPS[kernel][0](words, doc_ptr, doc_group, z, nwk.copy(), ndk.copy(), nk.copy(),
                           prior, eta, word_ptr, word_tokens, 40, tables, bitgen)
        draws[t] = z[0]
    observed = np.bincount(draws, minlength=K)
    assert _pooled_chisquare_pvalue(observed, exact) > 1e-3
    # Power: the conditional without the topic totals is rejected.
    wrong = (n_d + prior[0]) * (n_w + eta)
    assert _pooled_chisquare_pvalue(observed, wrong / wrong.sum()) < 1e-6


# ------------------------------------------------------------------ inputs
@pytest.mark.parametrize("kernel", KERNELS)
def test_mh_sweep_rejects_inconsistent_inputs(kernel):
    s = _random_state(0, K=4)
    V = s["nwk"].shape[0]
    ptr, tok = _mh_sampling.word_index(s["words"], V)
    tables = np.zeros((0, 4), dtype=np.int64)
    args = [s["words"], s["doc_ptr"], s["doc_group"], s["z"], s["nwk"], s["ndk"], s["nk"],
            s["prior"], 0.1, ptr, tok, 2, tables, np.random.PCG64(0)]
    bad = dict(enumerate(args))
    for i, value in [(9, ptr[:-1].copy()), (10, tok[:-1].copy()),
                     (12, np.zeros((1, 4), dtype=np.int64)), (6, s["nk"][:3].copy())]:
        call = [bad[j] if j != i else value for j in range(len(args))]
        with pytest.raises(ValueError, match="inconsistent array shapes"):
            _SWEEPS[kernel][0](*call)
    with pytest.raises(ValueError, match="mh_steps"):
        _SWEEPS[kernel][0](*args[:11], 0, *args[12:])
