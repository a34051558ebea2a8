"""The Cython kernels against their NumPy equivalents and exact distributions."""

import math
import time
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from scipy.special import gammaln

from sklearn_clda import _sampling


# ---------------------------------------------------------------- helpers
def _random_state(seed, n_docs=6, n_features=7, K=4, n_groups=2, max_len=9):
    """A small random sampler state with consistent counts."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, max_len, size=n_docs)
    lengths[0] = max(lengths[0], 3)
    doc_ptr = np.zeros(n_docs + 1, dtype=np.int64)
    doc_ptr[1:] = np.cumsum(lengths)
    words = rng.integers(0, n_features, size=doc_ptr[-1]).astype(np.int32)
    z = rng.integers(0, K, size=doc_ptr[-1]).astype(np.int32)
    doc_group = rng.integers(0, n_groups, size=n_docs).astype(np.int32)
    doc_of = np.repeat(np.arange(n_docs), lengths)
    nwk = np.zeros((n_features, K), dtype=np.int32)
    ndk = np.zeros((n_docs, K), dtype=np.int32)
    np.add.at(nwk, (words, z), 1)
    np.add.at(ndk, (doc_of, z), 1)
    nk = np.bincount(z, minlength=K).astype(np.int32)
    prior = rng.uniform(0.05, 2.0, size=(n_groups, K))
    return dict(words=words, doc_ptr=doc_ptr, doc_group=doc_group, z=z, nwk=nwk,
                ndk=ndk, nk=nk, prior=prior)


def _reference_uniforms(key, start, n):
    """Uniforms ``start:start + n`` of the kernels' stream of ``key``
    (SplitMix64's top 53 bits, as in ``_uniforms.h``)."""
    x = np.uint64(key) + np.arange(start + 1, start + n + 1, dtype=np.uint64) * np.uint64(
        0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return ((x ^ (x >> np.uint64(31))) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def _reference_token(s, i, d, u, eta, nk=None):
    """Token ``i`` of document ``d`` redrawn with uniform ``u``, as in
    ``gibbs_sweep``'s docstring (against the totals ``nk``, default
    ``s["nk"]``)."""
    words, z, nwk, ndk = s["words"], s["z"], s["nwk"], s["ndk"]
    nk = s["nk"] if nk is None else nk
    prior = s["prior"][s["doc_group"][d]]
    V = nwk.shape[0]
    w, k = words[i], z[i]
    ndk[d, k] -= 1
    nwk[w, k] -= 1
    nk[k] -= 1
    r = np.float32((ndk[d] + prior) * (1.0 / (nk + V * eta)))
    p = r * (nwk[w].astype(np.float32) + np.float32(eta))
    k = _reference_block_search(p, u)
    z[i] = k
    ndk[d, k] += 1
    nwk[w, k] += 1
    nk[k] += 1


def _reference_sweep(s, eta, tables, gen):
    """The NumPy equivalent stated in ``gibbs_sweep``'s docstring."""
    doc_ptr, doc_group = s["doc_ptr"], s["doc_group"]
    ndk, prior = s["ndk"], s["prior"]
    K = ndk.shape[1]
    hist = np.zeros((tables.shape[0], K, 64), dtype=np.int64)
    U = _reference_uniforms(gen.bit_generator.random_raw(), 0, len(s["words"]))
    for d in range(len(doc_ptr) - 1):
        g = doc_group[d]
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            _reference_token(s, i, d, U[i], eta)
        if tables.shape[0]:
            for k in range(K):
                n = ndk[d, k]
                if n >= 64:
                    tables[g, k] += _reference_tables(n, prior[g, k], gen)
                else:
                    hist[g, k, n] += 1
    if tables.shape[0]:
        _reference_binomial_tables(hist, prior, tables, gen)


def _reference_binomial_tables(hist, prior, tables, gen):
    """Antoniak sums from the count histogram, as in ``gibbs_sweep``'s docstring."""
    tail = np.cumsum(hist[:, :, ::-1], axis=2)[:, :, ::-1]
    counts = tail[:, :, 2:]
    cells = counts > 0
    if cells.any():
        a = prior[:, :, None]
        p = a / (a + np.arange(1, hist.shape[2] - 1))
        extra = np.zeros(counts.shape, dtype=np.int64)
        extra[cells] = gen.binomial(counts[cells], p[cells])
        tables += extra.sum(axis=2)
    tables += tail[:, :, 1]


def _reference_tables(n, a, gen):
    """Antoniak draw by inverting the waiting time, as in ``crp_tables``."""
    s, l = int(n > 0), 1
    while l < n:
        v, surv = gen.random(), 1.0
        while l < n:
            surv *= l / (a + l)
            l += 1
            if surv < v:
                s += 1
                break
    return s


def _reference_scan8(x):
    """Prefix sums of eight float32 values in the kernels' three vector steps."""
    j = np.arange(8)
    x = x + np.where(j % 4 >= 1, np.roll(x, 1), 0)
    x = x + np.where(j % 4 >= 2, np.roll(x, 2), 0)
    return x + np.where(j >= 4, x[3], 0)


def _reference_block_search(p, r):
    """Inversion in blocks of eight float32 weights, as documented in ``gibbs_sweep``."""
    K, f = len(p), np.float32
    n_blocks = -(-K // 8)
    B = np.zeros(8 * n_blocks, f)
    B[:K] = p
    B = B.reshape(-1, 8)
    T = ((B[:, 0] + B[:, 1]) + (B[:, 2] + B[:, 3])) + ((B[:, 4] + B[:, 5]) + (B[:, 6] + B[:, 7]))
    T = np.r_[T, np.zeros(-n_blocks % 8, f)].reshape(-1, 8)
    c, carry = [], f(0)
    for t in T:
        c.append(_reference_scan8(t) + carry)
        carry = c[-1][7]
    c = np.concatenate(c)
    u = f(r) * c[-1]
    b = min(np.count_nonzero(c <= u), n_blocks - 1)
    s = _reference_scan8(B[b])
    return min(8 * b + np.count_nonzero(s[:7] <= u - (c[b - 1] if b else f(0))), K - 1)


def _kernel_sweep(s, eta, tables, bitgen):
    _sampling.gibbs_sweep(s["words"], s["doc_ptr"], s["doc_group"], s["z"], s["nwk"],
                          s["ndk"], s["nk"], s["prior"], eta, tables, bitgen)


def _stirling_first_unsigned(n_max):
    """|S(n, m)| for 0 <= m <= n <= n_max, as exact Python integers."""
    table = [[1]]
    for n in range(1, n_max + 1):
        prev = table[-1] + [0]
        row = [0] * (n + 1)
        for m in range(1, n + 1):
            row[m] = (n - 1) * prev[m] + prev[m - 1]
        table.append(row)
    return table


def _antoniak_pmf(n, a, stirling):
    """P(s = m | n, a) = |S(n, m)| a^m Gamma(a) / Gamma(a + n), m = 0..n."""
    m = np.arange(n + 1)
    log_s = np.array([math.log(v) if v > 0 else -np.inf for v in stirling[n]])
    logp = log_s + m * np.log(a) + gammaln(a) - gammaln(a + n)
    return np.exp(logp)


def _chisquare_pvalue(observed, expected_p, min_expected=5.0):
    """Chi-square goodness of fit, pooling cells with small expected counts."""
    n = observed.sum()
    expected = expected_p * n
    order = np.argsort(expected)
    obs_pooled, exp_pooled = [], []
    acc_o = acc_e = 0.0
    for idx in order:
        acc_o += observed[idx]
        acc_e += expected[idx]
        if acc_e >= min_expected:
            obs_pooled.append(acc_o)
            exp_pooled.append(acc_e)
            acc_o = acc_e = 0.0
    if acc_e > 0:
        obs_pooled[-1] += acc_o
        exp_pooled[-1] += acc_e
    obs_pooled, exp_pooled = np.array(obs_pooled), np.array(exp_pooled)
    exp_pooled *= obs_pooled.sum() / exp_pooled.sum()
    return stats.chisquare(obs_pooled, exp_pooled).pvalue


# ------------------------------------------------------- gibbs_sweep: exact
@pytest.mark.parametrize("seed, K", [(0, 4), (1, 8), (2, 13), (3, 21)])
@pytest.mark.parametrize("with_tables", [False, True])
def test_gibbs_sweep_matches_numpy_reference_exactly(seed, K, with_tables):
    # Same bit generator state -> the kernel and the NumPy equivalent of its
    # docstring must produce the same assignments, counts and table draws.
    # K covers one partial block, one full block and several blocks.
    eta = 0.3
    s_kernel = _random_state(seed, K=K, n_docs=8, max_len=25)
    s_ref = {k: v.copy() for k, v in s_kernel.items()}
    n_groups, K = s_kernel["prior"].shape
    shape = (n_groups if with_tables else 0, K)
    tables_kernel = np.zeros(shape, dtype=np.int64)
    tables_ref = np.zeros(shape, dtype=np.int64)
    bitgen = np.random.PCG64(100 + seed)
    gen_ref = np.random.Generator(np.random.PCG64(100 + seed))
    z0 = s_kernel["z"].copy()
    for _ in range(5):
        _kernel_sweep(s_kernel, eta, tables_kernel, bitgen)
        _reference_sweep(s_ref, eta, tables_ref, gen_ref)
    for key in ("z", "nwk", "ndk", "nk"):
        np.testing.assert_array_equal(s_kernel[key], s_ref[key], err_msg=key)
    np.testing.assert_array_equal(tables_kernel, tables_ref)
    assert not np.array_equal(s_kernel["z"], z0)  # the sweeps did move tokens
    # The generators advanced by the same number of draws.
    assert bitgen.random_raw() == gen_ref.bit_generator.random_raw()
    if with_tables:
        assert tables_kernel.sum() > 0


def _padded(nwk):
    """The word-topic table in the estimators' layout: rows padded to 8k zeros."""
    out = np.zeros((nwk.shape[0], _sampling.padded_n_components(nwk.shape[1])), np.int32)
    out[:, : nwk.shape[1]] = nwk
    return out


@pytest.fixture
def kernel_setting():
    """Restore the kernel selection after a test that changes it."""
    old = _sampling._set_kernel("auto")
    yield _sampling._set_kernel
    _sampling._set_kernel(old)


# The kernel each setting of ``_set_kernel`` asks for on padded rows.
_WIDEST = {"auto": "avx2", "avx2": "avx2", "portable": "portable"}


@pytest.mark.parametrize("K", [3, 8, 13, 21, 30, 37, 70, 130])
@pytest.mark.parametrize("kernel", ["auto", "avx2", "portable"])
@pytest.mark.parametrize("padded", [True, False])
def test_gibbs_sweep_kernels_match_numpy_reference(K, kernel, padded, kernel_setting):
    # Every kernel and table layout gives the draws of the NumPy equivalent
    # (with Antoniak tables, so that the uniforms' order is checked too).
    if _WIDEST[kernel] not in _sampling.CPU_KERNELS:
        pytest.skip(f"this CPU has no {_WIDEST[kernel]}")
    kernel_setting(kernel)
    eta = 0.2
    s_kernel = _random_state(K, K=K, n_docs=10, n_features=9, max_len=30)
    s_ref = {k: v.copy() for k, v in s_kernel.items()}
    if padded:
        s_kernel["nwk"] = _padded(s_kernel["nwk"])
    expected = _WIDEST[kernel] if padded or K % 8 == 0 else "portable"
    assert _sampling._kernel_name(s_kernel["nwk"].shape[1], K) == expected
    tables_kernel = np.zeros((2, K), dtype=np.int64)
    tables_ref = np.zeros((2, K), dtype=np.int64)
    bitgen = np.random.PCG64(7 + K)
    gen_ref = np.random.Generator(np.random.PCG64(7 + K))
    for _ in range(4):
        _kernel_sweep(s_kernel, eta, tables_kernel, bitgen)
        _reference_sweep(s_ref, eta, tables_ref, gen_ref)
    np.testing.assert_array_equal(s_kernel["nwk"][:, :K], s_ref["nwk"])
    assert not s_kernel["nwk"][:, K:].any()
    for key in ("z", "ndk", "nk"):
        np.testing.assert_array_equal(s_kernel[key], s_ref[key], err_msg=key)
    np.testing.assert_array_equal(tables_kernel, tables_ref)
    assert bitgen.random_raw() == gen_ref.bit_generator.random_raw()


@pytest.mark.parametrize("K", [5, 30, 100, 333])
def test_gibbs_sweep_vector_and_portable_kernels_agree_on_a_large_state(K, kernel_setting):
    # Many more tokens than the NumPy reference can handle: the AVX2 kernel
    # must agree with the portable one draw for draw over several sweeps
    # (any rounding difference in the weights or the search would make the
    # chains diverge). K = 100 and 333: 13 and 42 blocks, so several groups
    # of eight block totals and a partial last group.
    kernel = "avx2"
    if kernel not in _sampling.CPU_KERNELS:
        pytest.skip("this CPU has no avx2")
    s1 = _random_state(K, K=K, n_docs=400, n_features=300, max_len=120)
    s2 = {k: v.copy() for k, v in s1.items()}
    s1["nwk"] = _padded(s1["nwk"])
    t1, t2 = np.zeros((2, K), dtype=np.int64), np.zeros((2, K), dtype=np.int64)
    b1, b2 = np.random.PCG64(3), np.random.PCG64(3)
    z0 = s1["z"].copy()
    for _ in range(6):
        kernel_setting(kernel)
        assert _sampling._kernel_name(s1["nwk"].shape[1], K) == _WIDEST[kernel]
        _kernel_sweep(s1, 0.05, t1, b1)
        kernel_setting("portable")
        _kernel_sweep(s2, 0.05, t2, b2)
    assert (s1["z"] != z0).mean() > 0.2
    np.testing.assert_array_equal(s1["z"], s2["z"])
    np.testing.assert_array_equal(s1["nwk"][:, :K], s2["nwk"])
    np.testing.assert_array_equal(t1, t2)


def test_gibbs_sweep_rejects_nonzero_padding():
    s = _random_state(0, K=5)
    s["nwk"] = _padded(s["nwk"])
    s["nwk"][0, 6] = 1
    with pytest.raises(ValueError, match="padding columns"):
        _kernel_sweep(s, 0.1, np.zeros((0, 5), dtype=np.int64), np.random.PCG64(0))


def test_set_kernel_rejects_unknown_names():
    with pytest.raises(ValueError, match="unknown kernel"):
        _sampling._set_kernel("sse9")


def test_gibbs_sweep_conserves_counts():
    s = _random_state(5, n_docs=20, n_features=11, K=5, max_len=15)
    tables = np.zeros((0, 5), dtype=np.int64)
    bitgen = np.random.PCG64(0)
    for _ in range(20):
        _kernel_sweep(s, 0.1, tables, bitgen)
    doc_of = np.repeat(np.arange(20), np.diff(s["doc_ptr"]))
    nwk = np.zeros_like(s["nwk"])
    ndk = np.zeros_like(s["ndk"])
    np.add.at(nwk, (s["words"], s["z"]), 1)
    np.add.at(ndk, (doc_of, s["z"]), 1)
    np.testing.assert_array_equal(s["nwk"], nwk)
    np.testing.assert_array_equal(s["ndk"], ndk)
    np.testing.assert_array_equal(s["nk"], np.bincount(s["z"], minlength=5))


def test_gibbs_sweep_rejects_inconsistent_shapes():
    s = _random_state(0)
    tables = np.zeros((0, 4), dtype=np.int64)
    with pytest.raises(ValueError, match="inconsistent"):
        _sampling.gibbs_sweep(s["words"], s["doc_ptr"], s["doc_group"], s["z"],
                              s["nwk"][:, :3].copy(), s["ndk"], s["nk"], s["prior"],
                              0.1, tables, np.random.PCG64(0))
    with pytest.raises(ValueError, match="doc_ptr"):
        _sampling.gibbs_sweep(s["words"][:-1].copy(), s["doc_ptr"], s["doc_group"],
                              s["z"][:-1].copy(), s["nwk"], s["ndk"], s["nk"],
                              s["prior"], 0.1, tables, np.random.PCG64(0))
    # Tables with other rows than the prior: refused before any token moves
    # (the kernel writes tables[g, k] without bounds checks).
    z0 = s["z"].copy()
    with pytest.raises(ValueError, match="inconsistent array shapes passed to gibbs"):
        _kernel_sweep(s, 0.1, np.zeros((1, 4), dtype=np.int64), np.random.PCG64(0))
    np.testing.assert_array_equal(s["z"], z0)


# --------------------------------------------- gibbs_sweep: the conditional
def _one_token_setup(rng, V=6, K=5):
    """One document with one token, plus arbitrary 'background' counts.

    The token is removed before it is redrawn, so every sweep is an
    independent draw from the same full conditional (eq. posterior-z).
    """
    words = np.array([2], dtype=np.int32)
    z = np.array([0], dtype=np.int32)
    nwk = rng.integers(0, 6, size=(V, K)).astype(np.int32)
    ndk = rng.integers(0, 4, size=(1, K)).astype(np.int32)
    nwk[2, 0] += 1  # the token itself
    ndk[0, 0] += 1
    nk = (nwk.sum(axis=0) + rng.integers(0, 10, size=K)).astype(np.int32)
    prior = rng.uniform(0.1, 1.5, size=(1, K))
    return words, z, nwk, ndk, nk, prior


def _conditional(nwk, ndk, nk, prior, w, k_cur, eta):
    nwk, ndk, nk = nwk.astype(float), ndk[0].astype(float), nk.astype(float)
    ndk[k_cur] -= 1
    nwk[w, k_cur] -= 1
    nk[k_cur] -= 1
    V = nwk.shape[0]
    p = (ndk + prior[0]) / (ndk.sum() + prior[0].sum()) * (nwk[w] + eta) / (nk + V * eta)
    return p / p.sum()


@pytest.mark.parametrize("seed, K", [(0, 5), (1, 19)])
def test_gibbs_sweep_draws_from_exact_conditional(seed, K):
    rng = np.random.default_rng(seed)
    eta = 0.2
    words, z, nwk, ndk, nk, prior = _one_token_setup(rng, K=K)
    expected = _conditional(nwk, ndk, nk, prior, 2, 0, eta)
    doc_ptr = np.array([0, 1], dtype=np.int64)
    doc_group = np.zeros(1, dtype=np.int32)
    tables = np.zeros((0, K), dtype=np.int64)
    bitgen = np.random.PCG64(seed)
    n_draws = 20000
    draws = np.empty(n_draws, dtype=np.int64)
    for t in range(n_draws):
        _sampling.gibbs_sweep(words, doc_ptr, doc_group, z, nwk, ndk, nk, prior, eta,
                              tables, bitgen)
        draws[t] = z[0]
    observed = np.bincount(draws, minlength=K)
    assert _chisquare_pvalue(observed, expected) > 1e-3
    # The same test rejects a subtly wrong conditional (topic totals ignored),
    # so it has the power to catch a kernel bug of that size.
    wrong = (ndk[0] + prior[0]) * (nwk[2] + eta)
    wrong = wrong / wrong.sum()
    assert _chisquare_pvalue(observed, wrong) < 1e-6


# ---------------------------------------------------------- Antoniak draws
@pytest.mark.parametrize("n, a", [(1, 0.5), (2, 0.3), (7, 0.05), (10, 0.7), (25, 2.5),
                                  (40, 12.0)])
def test_crp_tables_follow_stirling_distribution(n, a):
    stirling = _stirling_first_unsigned(40)
    pmf = _antoniak_pmf(n, a, stirling)
    assert pmf.sum() == pytest.approx(1.0, rel=1e-10)
    n_draws = 40000
    draws = _sampling.crp_tables(np.full(n_draws, n, dtype=np.int64),
                                 np.full(n_draws, a), np.random.PCG64(n))
    assert draws.min() >= 1 and draws.max() <= n
    observed = np.bincount(draws, minlength=n + 1)
    if n == 1:
        assert observed[1] == n_draws
        return
    assert _chisquare_pvalue(observed, pmf) > 1e-3
    # Power check: the law with a slightly different concentration is rejected.
    assert _chisquare_pvalue(observed, _antoniak_pmf(n, a * 1.3, stirling)) < 1e-4


def test_crp_tables_mean_and_edge_cases():
    a, n = 1.7, 30
    draws = _sampling.crp_tables(np.full(50000, n, dtype=np.int64), np.full(50000, a),
                                 np.random.PCG64(3))
    # E[s] = a (psi(a + n) - psi(a)); standard error ~ 0.01 here.
    from scipy.special import digamma

    assert draws.mean() == pytest.approx(a * (digamma(a + n) - digamma(a)), abs=0.05)
    zero = _sampling.crp_tables(np.zeros(3, dtype=np.int64), np.ones(3),
                                np.random.PCG64(0))
    np.testing.assert_array_equal(zero, 0)
    with pytest.raises(ValueError, match="same length"):
        _sampling.crp_tables(np.zeros(3, dtype=np.int64), np.ones(2), np.random.PCG64(0))


# ------------------------------------------------------------------ fold-in
def _reference_fold_in(X, doc_group, prior, phi, max_iter, tol):
    """The NumPy equivalent stated in ``fold_in``'s docstring (mean change)."""
    X = sp.csr_matrix(X)
    out = np.empty((X.shape[0], phi.shape[1]))
    for d in range(X.shape[0]):
        g = doc_group[d]
        t = prior[g] / prior[g].sum()
        cols = X.indices[X.indptr[d]:X.indptr[d + 1]]
        c = X.data[X.indptr[d]:X.indptr[d + 1]]
        if len(cols):
            for _ in range(max_iter):
                r = t * phi[cols]
                r /= r.sum(axis=1, keepdims=True)
                new = prior[g] + c @ r
                new /= new.sum()
                done = np.abs(new - t).mean() < tol
                t = new
                if done:
                    break
        out[d] = t
    return out


def _csr_args(X):
    X = sp.csr_matrix(X)
    return (X.indptr.astype(np.int64), X.indices.astype(np.int32),
            X.data.astype(np.float64))


def _fold_in_topics(rng, V, K, kind):
    """Word-major topics: "dense" (no word at a topic's floor but one) or
    "fitted" (sparse counts plus eta, normalized: most words at the floor)."""
    if kind == "dense":
        return rng.dirichlet(np.ones(V) * 0.5, size=K).T.copy()
    counts = np.where(rng.random((K, V)) < 0.25, rng.integers(1, 9, (K, V)), 0) + 0.05
    return (counts / counts.sum(axis=1, keepdims=True)).T.copy()


@pytest.mark.parametrize("kind", ["dense", "fitted"])
@pytest.mark.parametrize("max_iter, tol", [(1, 0.0), (3, 0.0), (200, 1e-9)])
def test_fold_in_matches_numpy_reference(max_iter, tol, kind):
    rng = np.random.default_rng(0)
    D, V, K = 12, 15, 4
    X = sp.random(D, V, density=0.3, random_state=1, format="csr",
                  data_rvs=lambda n: rng.integers(1, 5, size=n).astype(float))
    X = sp.csr_matrix(X)
    X.data[:] = np.rint(X.data)
    X = sp.vstack([sp.csr_matrix((1, V)), X]).tocsr()  # an empty first row
    doc_group = rng.integers(0, 2, size=D + 1).astype(np.int32)
    prior = rng.uniform(0.1, 1.0, size=(2, K))
    phi = _fold_in_topics(rng, V, K, kind)
    parts = _sampling.topic_word_parts(phi.T.copy(), np.ones(K))  # phi itself, by parts
    assert (len(parts[2]) < V * K / 2) == (kind == "fitted")
    theta = np.empty((D + 1, K))
    _sampling.fold_in(*_csr_args(X), doc_group, prior, *parts, max_iter, tol, theta)
    expected = _reference_fold_in(X, doc_group, prior, phi, max_iter, tol)
    np.testing.assert_allclose(theta, expected, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(theta[0], prior[doc_group[0]] / prior[doc_group[0]].sum())
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)


def test_doc_log_likelihood_matches_numpy():
    rng = np.random.default_rng(0)
    D, V, K = 9, 13, 3
    X = sp.csr_matrix(rng.integers(0, 3, size=(D, V)).astype(float))
    theta = rng.dirichlet(np.ones(K), size=D)
    phi = rng.dirichlet(np.ones(V), size=K).T.copy()
    out = np.empty(D)
    _sampling.doc_log_likelihood(*_csr_args(X), theta, phi, out)
    expected = (X.toarray() * np.log(theta @ phi.T)).sum(axis=1)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_crp_tables_matches_numpy_reference_exactly():
    rng = np.random.default_rng(7)
    n = rng.integers(0, 60, size=300).astype(np.int64)
    a = rng.uniform(0.01, 5.0, size=300)
    draws = _sampling.crp_tables(n, a, np.random.PCG64(11))
    gen = np.random.Generator(np.random.PCG64(11))
    expected = [_reference_tables(int(ni), ai, gen) for ni, ai in zip(n, a)]
    np.testing.assert_array_equal(draws, expected)


# ------------------------------------- Antoniak sums of the AGS sweep
def test_binomial_tables_follow_the_convolved_antoniak_law():
    # The sum over documents of independent Antoniak counts, drawn from the
    # count histogram, against the exact law (convolution of Stirling pmfs).
    a, doc_counts = 0.7, [1, 3, 3, 5, 12, 30]
    stirling = _stirling_first_unsigned(40)
    law = np.array([1.0])
    for n in doc_counts:
        law = np.convolve(law, _antoniak_pmf(n, a, stirling))
    n_cells = 20000  # independent replicates: one (collection, topic) cell each
    # Documents with these counts in every topic, and four in which the
    # topics are absent (they count for nothing).
    ndk = np.zeros((len(doc_counts) + 4, n_cells), dtype=np.int32)
    ndk[: len(doc_counts)] = np.array(doc_counts, dtype=np.int32)[:, None]
    doc_group = np.zeros(ndk.shape[0], dtype=np.int32)
    draws = []
    for seed in (0, 1):
        tables = np.zeros((1, n_cells), dtype=np.int64)
        _sampling._add_small_tables(ndk, doc_group, np.full((1, n_cells), a), tables,
                                    np.random.PCG64(seed))
        draws.append(tables[0])
    draws = np.concatenate(draws)
    assert draws.min() >= len(doc_counts) and draws.max() <= sum(doc_counts)
    observed = np.bincount(draws, minlength=len(law))
    assert _chisquare_pvalue(observed, law) > 1e-3
    wrong = np.array([1.0])
    for n in doc_counts:
        wrong = np.convolve(wrong, _antoniak_pmf(n, a * 1.15, stirling))
    assert _chisquare_pvalue(observed, wrong) < 1e-4


def _wide_sparse_counts(rng, n_docs, K, n_groups):
    """Counts of documents over many topics, nearly all zero: runs of 16
    zeros (skipped whole by the table draws' pass), lone counts, counts of
    64 and more (drawn one by one) and a partial last block (K % 16)."""
    ndk = np.zeros((n_docs, K), dtype=np.int32)
    for d in range(n_docs):
        k = rng.choice(K, size=rng.integers(0, 9), replace=False)
        ndk[d, k] = rng.choice([1, 2, 3, 7, 40, 63, 64, 65, 200], size=len(k))
    ndk[0, -1], ndk[1, :] = 5, 0  # the partial last block; an empty document
    ndk[2, :16], ndk[2, 15] = 0, 3  # the last count of a block, alone in it
    return ndk, rng.integers(0, n_groups, size=n_docs).astype(np.int32)


@pytest.mark.parametrize("K", [16, 70, 333])
def test_document_tables_of_wide_sparse_counts_match_reference(K):
    rng = np.random.default_rng(K)
    ndk, doc_group = _wide_sparse_counts(rng, 40, K, 3)
    prior = rng.uniform(0.05, 3.0, size=(3, K))
    got = np.zeros((3, K), dtype=np.int64)
    bitgen = np.random.PCG64(7)
    _sampling.document_tables(ndk, doc_group, prior, got, bitgen)
    want = np.zeros((3, K), dtype=np.int64)
    gen = np.random.Generator(np.random.PCG64(7))
    hist = np.zeros((3, K, 64), dtype=np.int64)
    for d in range(ndk.shape[0]):  # counts >= 64 one by one, in document and topic order
        for k in range(K):
            n = ndk[d, k]
            if n >= 64:
                want[doc_group[d], k] += _reference_tables(n, prior[doc_group[d], k], gen)
            else:
                hist[doc_group[d], k, n] += 1
    _reference_binomial_tables(hist, prior, want, gen)
    assert (ndk >= 64).any() and ((ndk > 1) & (ndk < 64)).any()
    assert np.array_equal(got, want)
    # the streams are left in the same place
    assert bitgen.random_raw() == gen.bit_generator.random_raw()


def test_small_tables_of_wide_sparse_counts_skip_the_big_counts():
    rng = np.random.default_rng(1)
    ndk, doc_group = _wide_sparse_counts(rng, 40, 70, 2)
    prior = rng.uniform(0.05, 3.0, size=(2, 70))
    got = np.zeros((2, 70), dtype=np.int64)
    _sampling._add_small_tables(ndk, doc_group, prior, got, np.random.PCG64(2))
    small = np.where(ndk < 64, ndk, 0)
    want = np.zeros((2, 70), dtype=np.int64)
    hist = np.zeros((2, 70, 64), dtype=np.int64)
    np.add.at(hist, (doc_group[:, None], np.arange(70), small), small > 0)
    _reference_binomial_tables(hist, prior, want, np.random.Generator(np.random.PCG64(2)))
    assert np.array_equal(got, want)


def test_small_tables_keep_many_times_the_first_buffer_of_counts():
    # A count of 2-63 in nearly every cell: about 70,000 kept counts, so their
    # buffer (room for 4,096 at first) grows several times, also in mid-document.
    rng = np.random.default_rng(5)
    ndk = rng.integers(0, 64, size=(2000, 40)).astype(np.int32)
    doc_group = rng.integers(0, 3, size=2000).astype(np.int32)
    prior = rng.uniform(0.05, 3.0, size=(3, 40))
    got = np.zeros((3, 40), dtype=np.int64)
    _sampling._add_small_tables(ndk, doc_group, prior, got, np.random.PCG64(4))
    want = np.zeros((3, 40), dtype=np.int64)
    hist = np.zeros((3, 40, 64), dtype=np.int64)
    np.add.at(hist, (doc_group[:, None], np.arange(40), ndk), ndk > 0)
    _reference_binomial_tables(hist, prior, want, np.random.Generator(np.random.PCG64(4)))
    assert (ndk >= 2).sum() > 16 * 4096
    assert np.array_equal(got, want)


def test_table_draws_reject_inconsistent_shapes():
    ndk = np.zeros((4, 5), dtype=np.int32)
    good = (ndk, np.zeros(4, np.int32), np.ones((2, 5)), np.zeros((2, 5), np.int64))
    for fn in (_sampling.document_tables, _sampling._add_small_tables):
        for i, bad in [(1, np.zeros(3, np.int32)), (2, np.ones((2, 6))),
                       (3, np.zeros((3, 5), np.int64))]:
            args = list(good)
            args[i] = bad
            with pytest.raises(ValueError, match="inconsistent array shapes"):
                fn(*args, np.random.PCG64(0))


def test_gibbs_sweep_tables_with_long_documents_match_reference():
    # Documents with 64 or more tokens of one topic take the direct
    # (waiting-time) Antoniak draw; the rest go through the histogram.
    s_kernel = _random_state(4, K=2, n_docs=7, n_features=5, max_len=260)
    s_ref = {k: v.copy() for k, v in s_kernel.items()}
    s_kernel["nwk"] = _padded(s_kernel["nwk"])
    t_kernel = np.zeros((2, 2), dtype=np.int64)
    t_ref = np.zeros((2, 2), dtype=np.int64)
    bitgen = np.random.PCG64(8)
    gen = np.random.Generator(np.random.PCG64(8))
    saw_long = False
    for _ in range(3):
        saw_long |= bool((s_ref["ndk"] >= 64).any())
        _kernel_sweep(s_kernel, 0.1, t_kernel, bitgen)
        _reference_sweep(s_ref, 0.1, t_ref, gen)
    assert saw_long
    np.testing.assert_array_equal(t_kernel, t_ref)
    np.testing.assert_array_equal(s_kernel["z"], s_ref["z"])
    assert bitgen.random_raw() == gen.bit_generator.random_raw()


@pytest.mark.parametrize("layout", ["one per document", "more collections than documents"])
def test_gibbs_sweep_tables_with_many_collections_match_reference(layout):
    # The compact Antoniak cells (no (G, K, 64) histogram) draw what the
    # dense reference draws, in its order: collections with one document,
    # empty collections, counts below and above 64 in the same sweep.
    n_docs, K = 30, 3
    n_groups = n_docs if layout == "one per document" else 2 * n_docs
    s_kernel = _random_state(6, K=K, n_docs=n_docs, n_features=6, max_len=260,
                             n_groups=n_groups)
    if layout == "one per document":
        order = np.random.default_rng(1).permutation(n_docs)
        s_kernel["doc_group"] = order.astype(np.int32)
    s_ref = {k: v.copy() for k, v in s_kernel.items()}
    s_kernel["nwk"] = _padded(s_kernel["nwk"])
    t_kernel = np.zeros((n_groups, K), dtype=np.int64)
    t_ref = np.zeros((n_groups, K), dtype=np.int64)
    bitgen = np.random.PCG64(12)
    gen = np.random.Generator(np.random.PCG64(12))
    for _ in range(3):
        _kernel_sweep(s_kernel, 0.1, t_kernel, bitgen)
        _reference_sweep(s_ref, 0.1, t_ref, gen)
        n = s_ref["ndk"]
        assert (n >= 64).any() and ((n >= 3) & (n < 64)).any()
    np.testing.assert_array_equal(t_kernel, t_ref)
    np.testing.assert_array_equal(s_kernel["z"], s_ref["z"])
    assert bitgen.random_raw() == gen.bit_generator.random_raw()


def _one_collection_per_document_state(n_docs, K, doc_len, n_features, seed=0):
    """A sampler state of ``n_docs`` documents of ``doc_len`` tokens, each its own collection."""
    rng = np.random.default_rng(seed)
    doc_ptr = np.arange(n_docs + 1, dtype=np.int64) * doc_len
    words = rng.integers(0, n_features, size=doc_ptr[-1]).astype(np.int32)
    # Few topics per document, so that many counts are above one.
    z = (rng.integers(0, K, size=(n_docs, 1)) + rng.integers(0, 4, size=(n_docs, doc_len)))
    z = (z % K).astype(np.int32).ravel()
    nwk = np.zeros((n_features, _sampling.padded_n_components(K)), dtype=np.int32)
    np.add.at(nwk, (words, z), 1)
    ndk = np.zeros((n_docs, K), dtype=np.int32)
    np.add.at(ndk, (np.repeat(np.arange(n_docs), doc_len), z), 1)
    return dict(words=words, doc_ptr=doc_ptr, doc_group=np.arange(n_docs, dtype=np.int32),
                z=z, nwk=nwk, ndk=ndk, nk=np.bincount(z, minlength=K).astype(np.int32),
                prior=rng.uniform(0.05, 2.0, size=(n_docs, K)))


def _sweep_seconds(s, tables, repeats=3):
    best = np.inf
    for r in range(repeats):
        t0 = time.perf_counter()
        _kernel_sweep(s, 0.05, tables, np.random.PCG64(r))
        best = min(best, time.perf_counter() - t0)
    return best


def test_gibbs_sweep_with_one_collection_per_document_stays_small():
    # 5000 collections of one document each, K=200: the Antoniak step must
    # cost O(tokens + collections * K), not a (collections, K, 64) histogram
    # (256 MB of int32, plus an int64 copy of twice that).
    n_docs, K = 5000, 200
    s = _one_collection_per_document_state(n_docs, K, doc_len=20, n_features=300)
    tables = np.zeros((n_docs, K), dtype=np.int64)
    tracemalloc.start()
    try:
        _kernel_sweep(s, 0.05, tables, np.random.PCG64(0))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert tables.sum() > 0
    budget = 3 * tables.nbytes + 64 * len(s["words"])  # about 30 MB
    assert peak < budget, f"peak {peak / 2**20:.0f} MiB"
    # Time: within a few times the same sweep without the Antoniak draws
    # (the old histogram made it about 50 times slower).
    with_tables = _sweep_seconds(s, tables)
    without = _sweep_seconds(s, np.zeros((0, K), dtype=np.int64))
    assert with_tables < 4 * without + 0.02, (with_tables, without)


@pytest.mark.parametrize("n, dtype", [(1, np.float64), (5, np.float64), (8, np.float64),
                                      (30, np.int32), (1000, np.int32)])
def test_line_buffer_owns_whole_cache_lines(n, dtype):
    # Scratch buffers of the sweep (one set per thread) start on a cache line
    # and own every line they touch, so threads never share a written line.
    buf = _sampling._line_buffer(n, dtype)
    assert buf.shape == (n,) and buf.dtype == dtype and not buf.any()
    start = buf.ctypes.data
    assert start % 64 == 0
    owned_end = buf.base.ctypes.data + buf.base.nbytes
    assert owned_end >= start + -(-buf.nbytes // 64) * 64


@pytest.mark.parametrize("seed", range(4))
def test_count_assignments_matches_numpy_reference(seed):
    """The tables counted in place equal the ``np.add.at`` counts of the
    docstring, also into padded rows (whose padding stays zero)."""
    s = _random_state(seed, n_docs=9, n_features=11, K=5)
    padded = np.zeros((11, 8), dtype=np.int32)
    nwk, ndk, nk = padded[:, :5], np.zeros((9, 5), np.int32), np.zeros(5, np.int32)
    _sampling.count_assignments(s["words"], s["doc_ptr"], s["z"], nwk, ndk, nk)
    np.testing.assert_array_equal(nwk, s["nwk"])
    np.testing.assert_array_equal(ndk, s["ndk"])
    np.testing.assert_array_equal(nk, s["nk"])
    assert not padded[:, 5:].any()


def test_count_assignments_without_word_table():
    # A state of the sparse sampler: no word-topic table, the words checked
    # against n_features instead.
    s = _random_state(1, n_docs=9, n_features=11, K=5)
    ndk, nk = np.zeros((9, 5), np.int32), np.zeros(5, np.int32)
    _sampling.count_assignments(s["words"], s["doc_ptr"], s["z"], None, ndk, nk, 11)
    np.testing.assert_array_equal(ndk, s["ndk"])
    np.testing.assert_array_equal(nk, s["nk"])
    with pytest.raises(ValueError, match="word index is out of range"):
        _sampling.count_assignments(s["words"], s["doc_ptr"], s["z"], None, ndk, nk,
                                    int(s["words"].max()))
    with pytest.raises(ValueError, match="inconsistent"):  # n_features not given
        _sampling.count_assignments(s["words"], s["doc_ptr"], s["z"], None, ndk, nk)


@pytest.mark.parametrize("bad, match", [
    ("word", "word index is out of range"),
    ("topic", "topic in z is out of range"),
    ("ptr", "inconsistent array shapes"),
])
def test_count_assignments_rejects_out_of_range_input_before_counting(bad, match):
    s = _random_state(0)
    words, z, doc_ptr = s["words"].copy(), s["z"].copy(), s["doc_ptr"].copy()
    if bad == "word":
        words[-1] = s["nwk"].shape[0]
    elif bad == "topic":
        z[-1] = -1
    else:
        doc_ptr[-1] += 1
    nwk, ndk, nk = (np.zeros_like(s[k]) for k in ("nwk", "ndk", "nk"))
    with pytest.raises(ValueError, match=match):
        _sampling.count_assignments(words, doc_ptr, z, nwk, ndk, nk)
    assert not (nwk.any() or ndk.any() or nk.any())


# ------------------------------------------------ fixed topics, new documents
def _fixed_topics_reference(doc_ptr, words, phi_t, prior, doc_prior, z, ndk, u):
    """The NumPy equivalent in ``fixed_topics_sweep``'s docstring."""
    K = phi_t.shape[1]
    for d in range(len(doc_ptr) - 1):
        for t in range(doc_ptr[d], doc_ptr[d + 1]):
            ndk[d, z[t]] -= 1
            c = np.cumsum((ndk[d] + prior[doc_prior[d]]) * phi_t[words[t]])
            z[t] = min((c <= u[t] * c[-1]).sum(), K - 1)
            ndk[d, z[t]] += 1


@pytest.mark.parametrize("seed, K", [(0, 1), (1, 3), (2, 17), (3, 64)])
def test_fixed_topics_sweep_matches_numpy_reference(seed, K):
    rng = np.random.default_rng(seed)
    n_docs, V = 9, 11
    lengths = rng.integers(0, 12, size=n_docs)
    lengths[2] = 0  # an empty document
    doc_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    words = rng.integers(0, V, size=lengths.sum()).astype(np.int32)
    phi_t = rng.dirichlet(np.full(V, 0.3), size=K).T.copy()
    phi_t[0, :] = 0.0  # a word no topic has: its tokens keep being drawn
    prior = rng.uniform(0.01, 2.0, size=(3, K))  # three priors, documents' rows drawn
    doc_prior = rng.integers(0, 3, size=n_docs).astype(np.int64)
    z = rng.integers(0, K, size=lengths.sum()).astype(np.int64)
    ndk = np.zeros((n_docs, K), dtype=np.int64)
    np.add.at(ndk, (np.repeat(np.arange(n_docs), lengths), z), 1)
    z_ref, ndk_ref = z.copy(), ndk.copy()
    for _ in range(5):
        u = rng.random(lengths.sum())
        _sampling.fixed_topics_sweep(doc_ptr, words, phi_t, prior, doc_prior, z, ndk, u)
        _fixed_topics_reference(doc_ptr, words, phi_t, prior, doc_prior, z_ref, ndk_ref, u)
        np.testing.assert_array_equal(z, z_ref)
        np.testing.assert_array_equal(ndk, ndk_ref)
    np.testing.assert_array_equal(ndk.sum(axis=1), lengths)


def test_fixed_topics_sweep_refuses_inconsistent_arrays():
    args = dict(doc_ptr=np.array([0, 1], dtype=np.int64), words=np.zeros(1, dtype=np.int32),
                phi_t=np.ones((1, 2)), prior=np.ones((1, 2)),
                doc_prior=np.zeros(1, dtype=np.int64), z=np.zeros(1, dtype=np.int64),
                ndk=np.ones((1, 2), dtype=np.int64), u=np.zeros(1))
    _sampling.fixed_topics_sweep(**args)
    for name, bad in (("prior", np.ones((1, 3))), ("u", np.zeros(0)),
                      ("doc_prior", np.zeros(2, dtype=np.int64)),
                      ("doc_prior", np.ones(1, dtype=np.int64)),
                      ("doc_prior", np.full(1, -1, dtype=np.int64)),
                      ("ndk", np.ones((1, 3), dtype=np.int64)),
                      ("doc_ptr", np.array([0, 2], dtype=np.int64))):
        with pytest.raises(ValueError, match="fixed_topics_sweep"):
            _sampling.fixed_topics_sweep(**{**args, name: bad})
