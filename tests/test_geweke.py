"""Joint-distribution ("getting it right") tests of the Gibbs samplers.

Geweke (2004), "Getting it right: joint distribution tests of posterior
simulators", JASA 99(467). Two simulators of the same joint distribution
of latent variables and data are compared on tiny corpora (beta and theta
integrated out, so the variables are ``(z, w)`` for LDA and ``(pi, z, w)``
for cLDA):

* marginal-conditional: independent draws from the prior predictive
  (``pi_j ~ Dir(alpha)``, ``theta_jd ~ Dir(gamma pi_j)``, ``z ~ theta``,
  ``beta_k ~ Dir(eta)``, ``w ~ beta_z``);
* successive-conditional: from one prior draw, alternate (a) the posterior
  sampler's transition given ``w`` and (b) a redraw of ``w | z``. Since
  beta is not part of the state, ``p(w | z)`` is the Dirichlet-multinomial
  ``int p(w | z, beta) p(beta) dbeta``, so drawing a fresh ``beta_k ~
  Dir(eta)`` from its *prior* and then ``w ~ beta_z`` is exact.

If (a) leaves the posterior ``p(latents | w)`` invariant, the
successive-conditional chain leaves the joint prior invariant, and it
starts there; any test function ``g`` then has the same mean under both
simulators. The samplers under test are the production code:

* LDAGibbs: the collapsed Gibbs sweep (``_sampling.gibbs_sweep`` through
  ``_ShardedSweeper`` with one shard, one prior row from
  ``LDAGibbs._sweep_prior`` and no table rows), exactly what
  ``_fit_counts`` runs every iteration;
* CompoundLDA AGS: the same sweep with ``(J, K)`` table rows (Antoniak
  counts drawn by the kernel), then ``CompoundLDA._after_sweep`` (``pi_j ~
  Dir(alpha + tables_j)``);
* CompoundLDA MGS: the sweep without tables, then ``_after_sweep`` (one
  MMALA proposal per collection, ``sklearn_clda._mgs.MMALAState.step``) with
  a fixed step (``adapt_step_size=False``; adaptation during burn-in is
  deliberately not a fixed kernel and is not what is tested here).

The harness makes the same calls as ``_fit_counts`` with ``n_jobs=1``
(``sweeper.sweep(est._sweep_prior(run), est._eta_value(run))``, then
``est._after_sweep(run, sweep, tables, rng, state)`` with a PCG64 ``Generator``) and
differs from ``fit`` only where a Geweke test must: the chain starts from
a prior draw of ``(pi, z, w)`` (``fit`` starts from uniform ``pi``, random
``z`` and the data), the words are redrawn between sweeps, and a
document's tokens are kept in generation order instead of CSR
(sorted-by-word) order, which only changes the order of the systematic
scan (any fixed order is a valid Gibbs scan). For MGS the chain's state
includes ``varphi`` (``pi = |varphi| / sum |varphi|``), so the start draws
``|varphi_jk| ~ Gamma(alpha)`` with random signs, the stationary law of
``MMALAState``'s target (``fit`` starts at ``pi * K * alpha``).

Test functions (``_test_functions``): the fraction of tokens in topic 0
and in the cell (word 0, topic 0); topics per document; the fractions of
token pairs sharing a topic within a document, across documents of a
collection, sharing a word, sharing word and topic; the same indicators
at single positions (tokens 0 and 1 of document 0, the last token of
document 0 and the first of document 1, the last two tokens); for cLDA
``pi_j0``, ``pi_j0^2``, ``sum_k pi_jk^2``, ``pi_j0`` times collection j's
fraction of topic 0, and the last collection's ``pi_J0``.

Statistic: Geweke's ``z = (mean_MC - mean_SC) / sqrt(var_MC / M +
var_SC)``, the variance of the successive-conditional mean estimated by
batch means (50 batches of 300-1600 sweeps; the integrated
autocorrelation times are 1-5 sweeps for LDA, up to ~18 for AGS and ~25
for MGS on the pi statistics). Under a correct sampler each ``z`` is
approximately standard normal (``t_49`` at worst). Every statistic of the
file must satisfy ``|z| < 4``: ``P(|N(0,1)| > 4) = 6.3e-5`` and ``P(|t_49|
> 4) = 2.1e-4``, so over the ~110 checks here a correct implementation
with other seeds would fail somewhere with probability < 1% (normal) or
< 2.5% (t, Bonferroni, which is conservative because the statistics are
strongly correlated). The seeds are fixed, so the outcome is
deterministic. Observed with these seeds (``pytest -s`` prints all):
largest |z| 1.76 (LDA), 2.10 (AGS), 2.09 (MGS), 0.66 (exact pi | z
checks), 1.26 / 2.12 / 1.60 (second regime, slow: LDA / AGS / MGS). The
power checks run the same harness with one deliberately wrong ingredient
and require some ``|z| > 8`` (about 1e-15 per statistic under a correct
sampler); observed 14.0 (sweep told eta twice the model's), 34.7 (AGS
with "minimal path" tables), 16.8 (MMALA with the proposal's
log-determinant dropped from the Hastings ratio).
"""

import math
from types import SimpleNamespace
from unittest import mock

import numpy as np
import pytest

from sklearn_clda import CompoundLDA, LDAGibbs, _sampling
from sklearn_clda._base import _FitRun
from sklearn_clda._sweeper import _ShardedSweeper
from sklearn_clda._mgs import MMALAState

N_BATCHES = 50
Z_MAX = 4.0  # Bonferroni-honest threshold for correct samplers (see module docstring)
Z_POWER = 8.0  # what a wrong sampler must exceed somewhere


# ------------------------------------------------------------------ corpus
class _Spec:
    """Fixed layout: J collections x D documents x L tokens, documents of
    collection ``j`` contiguous, tokens of a document contiguous."""

    def __init__(self, J, D, L, K, V):
        self.J, self.D, self.L, self.K, self.V = J, D, L, K, V
        self.n_docs = J * D
        self.N = J * D * L
        self.doc_ptr = np.arange(0, self.N + 1, L, dtype=np.int64)
        self.doc_group = np.repeat(np.arange(J, dtype=np.int32), D)
        self.doc_of = np.repeat(np.arange(self.n_docs), L)


class _State:
    """The attributes of ``_sweeper._GibbsState`` that the sweeper and hooks read."""

    def __init__(self, spec, z, w):
        K, V = spec.K, spec.V
        self.words = np.ascontiguousarray(w, dtype=np.int32)
        self.z = np.ascontiguousarray(z, dtype=np.int32)
        self.doc_ptr = spec.doc_ptr.copy()
        self.doc_group = spec.doc_group.copy()
        self.doc_len = np.diff(self.doc_ptr)
        self.n_features = V
        # Padded word-topic rows, as in _GibbsState (the vectorized kernel's layout).
        self.nwk_padded = np.zeros((V, _sampling.padded_n_components(K)), dtype=np.int32)
        self.nwk = self.nwk_padded[:, :K]
        self.nwk[...] = np.bincount(self.words * K + self.z, minlength=V * K).reshape(V, K)
        self.ndk = (
            np.bincount(spec.doc_of * K + self.z, minlength=spec.n_docs * K)
            .astype(np.int32)
            .reshape(spec.n_docs, K)
        )
        self.nk = np.bincount(self.z, minlength=K).astype(np.int32)

    def check(self, spec):
        """Counts equal the tallies of (z, words) (used once per chain, at the end)."""
        ref = _State(spec, self.z, self.words)
        for name in ("nwk", "ndk", "nk"):
            np.testing.assert_array_equal(getattr(self, name), getattr(ref, name))


def _dirichlet(rng, conc):
    """Dirichlet draws along the last axis via normalized Gammas."""
    g = rng.standard_gamma(conc)
    return g / g.sum(axis=-1, keepdims=True)


def _inverse_cdf(u, cum):
    """Index drawn by inversion: the number of ``cum[..., k]`` (k < n - 1) at
    or below ``u * cum[..., -1]``, with ``u`` uniform on [0, 1) and ``cum``
    the running sums of the unnormalized probabilities (broadcast against u)."""
    x = u * cum[..., -1]
    k = np.zeros(x.shape, dtype=np.int64)
    for j in range(cum.shape[-1] - 1):
        k += x >= cum[..., j]
    return k


def _prior_draws(spec, model, rng, M):
    """M independent draws of (pi, z, w) from the prior predictive.

    ``model`` holds ``alpha`` (LDA: the document-topic prior vector; cLDA:
    the scalar collection concentration), ``gamma`` (cLDA only, else None)
    and ``eta``. Returns pi of shape (M, J, K) (None for LDA), z and w of
    shape (M, N), tokens of document ``d`` at ``d * L .. (d + 1) * L - 1``.
    """
    J, D, L, K, V = spec.J, spec.D, spec.L, spec.K, spec.V
    if model.gamma is None:
        pi = None
        doc_conc = np.broadcast_to(model.alpha, (M, spec.n_docs, K))
    else:
        pi = _dirichlet(rng, np.full((M, J, K), model.alpha))
        doc_conc = model.gamma * np.repeat(pi, D, axis=1)
    # theta_d ~ Dir(doc_conc) as unnormalized Gammas; z ~ theta_d.
    theta_cum = np.cumsum(rng.standard_gamma(doc_conc), axis=2)  # (M, n_docs, K)
    z = _inverse_cdf(rng.random((M, spec.n_docs, L)), theta_cum[:, :, None, :])
    z = z.reshape(M, spec.N)
    # beta_k ~ Dir(eta) as unnormalized Gammas; w_i ~ beta_{z_i}.
    beta_cum = np.cumsum(rng.standard_gamma(model.eta, size=(M, K, V)), axis=2)
    x = rng.random((M, spec.N)) * np.take_along_axis(beta_cum[:, :, -1], z, axis=1)
    w = np.zeros((M, spec.N), dtype=np.int64)
    for v in range(V - 1):  # inversion, as in _inverse_cdf
        w += x >= np.take_along_axis(beta_cum[:, :, v], z, axis=1)
    return pi, z, w


# --------------------------------------------------------- test functions
def _pair_fraction(counts, n):
    """Fraction of unordered pairs among ``n`` items that share a cell, given
    the cell counts along the last axis."""
    return (counts * (counts - 1)).sum(axis=-1) / (n * (n - 1))


def _test_functions(spec, pi, z, w):
    """Test functions g(pi, z, w), each an array over draws (axis 0).

    Averaged pair statistics average an indicator over all pairs of a kind
    (by exchangeability of the prior they have the mean of the indicator
    for one pair, with less variance). Position-specific ones (document 0,
    the last document, the boundary between documents 0 and 1) are kept
    too, because a scan that mishandled a particular position (first token,
    last document, document boundary) would break exchangeability in a way
    the averages could hide.
    """
    J, D, L, K, V, N = spec.J, spec.D, spec.L, spec.K, spec.V, spec.N
    M = z.shape[0]
    row = np.arange(M, dtype=np.int64)[:, None]
    z = z.astype(np.int64)
    w = w.astype(np.int64)

    def tally(cell, n_cells):
        flat = (row * n_cells + cell).ravel()
        return np.bincount(flat, minlength=M * n_cells).reshape(M, n_cells).astype(np.float64)

    ndk = tally(spec.doc_of * K + z, spec.n_docs * K).reshape(M, spec.n_docs, K)
    njk = ndk.reshape(M, J, D, K).sum(axis=2)  # (M, J, K)
    nk = njk.sum(axis=1)
    nv = tally(w, V)
    nvk = tally(w * K + z, V * K)
    g = {
        # averages over tokens, documents or pairs
        "topic0_frac": nk[:, 0] / N,
        "word0_topic0_frac": nvk[:, 0] / N,  # cell (word 0, topic 0)
        "n_topics_per_doc": (ndk > 0).sum(axis=2).mean(axis=1),
        "same_topic_in_doc": _pair_fraction(ndk, L).mean(axis=1),
        "same_word": _pair_fraction(nv, N),
        "same_word_and_topic": _pair_fraction(nvk, N),
        # single positions
        "doc0_n_topics": (ndk[:, 0] > 0).sum(axis=1).astype(np.float64),
        "doc0_tok01_same_topic": (z[:, 0] == z[:, 1]).astype(np.float64),
        "doc0_tok01_same_word": (w[:, 0] == w[:, 1]).astype(np.float64),
        "doc01_boundary_same_topic": (z[:, L - 1] == z[:, L]).astype(np.float64),
        "last_doc_last_pair_same_topic": (z[:, N - 2] == z[:, N - 1]).astype(np.float64),
    }
    if D > 1:
        # Same topic, same collection, different documents.
        pairs = (njk * (njk - 1)).sum(axis=(1, 2)) - (ndk * (ndk - 1)).sum(axis=(1, 2))
        g["same_topic_across_docs"] = pairs / (J * D * (D - 1) * L * L)
    if pi is not None:
        g["pi0"] = pi[:, :, 0].mean(axis=1)
        g["pi0_sq"] = (pi[:, :, 0] ** 2).mean(axis=1)
        g["pi_sq_sum"] = (pi**2).sum(axis=2).mean(axis=1)
        # coupling of each pi_j with its own collection's topic counts
        g["pi0_x_topic0"] = (pi[:, :, 0] * njk[:, :, 0] / (D * L)).mean(axis=1)
        g["pi_last0"] = pi[:, -1, 0]
    return g


def _chain_mean(g, n_batches=N_BATCHES):
    """Mean of a chain's values and its variance by batch means."""
    n = len(g) - len(g) % n_batches
    batches = g[:n].reshape(n_batches, -1).mean(axis=1)
    return batches.mean(), batches.var(ddof=1) / n_batches


def _geweke_z(g_mc, g_sc):
    """Geweke's statistic: independent draws g_mc against chain values g_sc."""
    mean_sc, var_sc = _chain_mean(g_sc)
    var_mc = g_mc.var(ddof=1) / len(g_mc)
    return float((g_mc.mean() - mean_sc) / math.sqrt(var_mc + var_sc))


# --------------------------------------------------------------- samplers
def _new_run(est, n_features, n_groups):
    """The per-fit variables of ``est`` as ``fit`` starts them, with no burn-in
    (so no MGS step adaptation) and no Gibbs-EM."""
    run = _FitRun(burn_in=0, learned=frozenset(), update_sweeps=frozenset())
    est._start_run(run, n_features, n_groups)
    return run


class _LDATransition:
    """LDAGibbs's transition: one collapsed Gibbs sweep (the fit loop's body)."""

    def __init__(self, spec, model, seed, eta_used=None):
        self.est = LDAGibbs(
            n_components=spec.K, doc_topic_prior=model.alpha, topic_word_prior=model.eta
        )
        self.run = _new_run(self.est, spec.V, 1)
        self.seed = seed
        # Power check only: the sweep told a different eta than the model's.
        self.eta_used = eta_used

    def start(self, state, pi0, rng):
        self.sweeper = _ShardedSweeper(state, 1, np.random.SeedSequence(self.seed), 0)

    def __call__(self, state):
        eta = self.est._eta_value(self.run) if self.eta_used is None else self.eta_used
        self.sweeper.sweep(self.est._sweep_prior(self.run), eta)

    def pi(self):
        return None


class _CLDATransition:
    """CompoundLDA's transition: the sweep, then ``_after_sweep`` (the pi update)."""

    def __init__(self, spec, model, seed, algorithm, step_size=None, tables_hook=None):
        kw = {} if step_size is None else dict(step_size=step_size, adapt_step_size=False)
        self.est = CompoundLDA(
            n_components=spec.K, alpha=model.alpha, gamma=model.gamma, eta=model.eta,
            algorithm=algorithm, **kw,
        )
        # burn_in=0: no MGS step adaptation (also off by adapt_step_size)
        self.run = _new_run(self.est, spec.V, spec.J)
        self.seed = seed
        # Power check only: replace the kernel's Antoniak counts.
        self.tables_hook = tables_hook

    def start(self, state, pi0, rng):
        est = self.est
        run = self.run
        n_rows = state.doc_group.max() + 1 if est._draw_tables(run) else 0
        ss = np.random.SeedSequence(self.seed)
        sweep_ss, global_ss = ss.spawn(2)
        self.sweeper = _ShardedSweeper(state, 1, sweep_ss, n_rows)
        self.rng = np.random.Generator(np.random.PCG64(global_ss))
        run.pi = pi0.copy()
        if est.algorithm == "mgs":
            # A draw of varphi from its stationary law given pi0: independent
            # |varphi_j| total mass ~ Gamma(K alpha), random signs.
            J, K = pi0.shape
            mass = rng.standard_gamma(K * run.alpha, size=(J, 1))
            signs = rng.choice([-1.0, 1.0], size=(J, K))
            run.update.mmala.varphi = signs * pi0 * mass

    def __call__(self, state):
        est = self.est
        run = self.run
        tables = self.sweeper.sweep(est._sweep_prior(run), est._eta_value(run))
        if self.tables_hook is not None:
            tables = self.tables_hook(tables, state)
        est._after_sweep(run, 1, tables, self.rng, state)

    def pi(self):
        return self.run.pi


def _successive_conditional(spec, model, transition, T, seed):
    """T steps of (posterior transition, then w | z); returns (pi, z, w) per step."""
    rng = np.random.default_rng(seed)
    pi0, z0, w0 = _prior_draws(spec, model, rng, 1)
    state = _State(spec, z0[0], w0[0])
    transition.start(state, None if pi0 is None else pi0[0], rng)
    K, V, N = spec.K, spec.V, spec.N
    pis = None if pi0 is None else np.empty((T, spec.J, K))
    zs = np.empty((T, N), dtype=np.int32)
    ws = np.empty((T, N), dtype=np.int32)
    chunk = 2000
    for t in range(T):
        if t % chunk == 0:
            # Randomness of the w | z step, drawn in bulk: fresh topics from
            # the prior (as cumulative sums) and one uniform per token.
            n = min(chunk, T - t)
            beta_cum = np.cumsum(rng.standard_gamma(model.eta, size=(n, K, V)), axis=2)
            uniforms = rng.random((n, N))
        transition(state)
        # (b) w | z: w_i ~ beta_{z_i} with beta_k ~ Dir(eta) drawn afresh.
        state.words[:] = _inverse_cdf(uniforms[t % chunk], beta_cum[t % chunk][state.z])
        state.nwk[...] = np.bincount(state.words * K + state.z, minlength=V * K).reshape(V, K)
        zs[t] = state.z
        ws[t] = state.words
        if pis is not None:
            pis[t] = transition.pi()
    state.check(spec)
    return pis, zs, ws


def _run_geweke(spec, model, transition, T, M, seed):
    """Geweke z-statistic per test function: M prior draws against T chain steps."""
    mc = _test_functions(spec, *_prior_draws(spec, model, np.random.default_rng(seed), M))
    sc = _test_functions(spec, *_successive_conditional(spec, model, transition, T, seed + 1))
    return {name: _geweke_z(mc[name], sc[name]) for name in mc}


def _fmt(zs):
    return ", ".join(f"{k}={v:+.2f}" for k, v in zs.items())


# ------------------------------------------------------------------ setups
# Tiny corpora (fixed document lengths), so that a sweep costs ~10 us and
# the chains mix in a few sweeps. An asymmetric LDA prior makes topic
# labels matter; cLDA's gamma is small enough that pi_j and the documents'
# topics are strongly coupled, which is what the pi update must get right.
LDA_SPEC = _Spec(J=1, D=6, L=4, K=3, V=4)
LDA_MODEL = SimpleNamespace(alpha=np.array([0.3, 0.7, 1.5]), gamma=None, eta=0.5)
CLDA_SPEC = _Spec(J=2, D=3, L=4, K=3, V=4)
CLDA_MODEL = SimpleNamespace(alpha=1.0, gamma=1.5, eta=0.5)
# MMALA's fixed step: acceptance ~0.46 here, and the smallest integrated
# autocorrelation time of the pi statistics among 0.4 .. 1.3 (~10-30 sweeps).
MGS_STEP = 0.6
M_PRIOR = 100_000  # marginal-conditional draws per test


def _assert_geweke_passes(zs, label):
    print(f"{label}: {_fmt(zs)}")
    worst = max(zs, key=lambda k: abs(zs[k]))
    assert abs(zs[worst]) < Z_MAX, f"{label}: {worst} has z = {zs[worst]:+.2f}; all: {_fmt(zs)}"


def _assert_geweke_detects(zs, label):
    print(f"{label}: {_fmt(zs)}")
    assert max(abs(v) for v in zs.values()) > Z_POWER, f"{label} not detected: {_fmt(zs)}"


# -------------------------------------------------------- harness checks
def test_prior_simulator_matches_closed_forms():
    # The marginal-conditional simulator against exact prior moments, so
    # that a pass below is not a bug shared by both simulators (step (b)
    # reuses nothing of it but the same inversion helper). With S = E sum_k
    # pi_k^2 = (alpha + 1) / (K alpha + 1):
    #   E pi_j0 = 1/K; E pi_j0^2 = (alpha + 1) / (K (K alpha + 1));
    #   P(two tokens of a document share a topic) = (gamma S + 1) / (gamma + 1);
    #   P(tokens of two documents of one collection share a topic) = S;
    #   P(two tokens share a word) = q (eta + 1) / (V eta + 1) + (1 - q) / V
    #   with q the probability that they share a topic.
    spec, m = CLDA_SPEC, CLDA_MODEL
    M = M_PRIOR
    g = _test_functions(spec, *_prior_draws(spec, m, np.random.default_rng(0), M))
    K, a, gam, eta, V = spec.K, m.alpha, m.gamma, m.eta, spec.V
    S = (a + 1) / (K * a + 1)
    p_doc = (gam * S + 1) / (gam + 1)
    n_doc_pairs = spec.n_docs * spec.L * (spec.L - 1) / 2
    n_coll_pairs = spec.J * spec.D * (spec.D - 1) / 2 * spec.L**2
    n_pairs = spec.N * (spec.N - 1) / 2
    n_cross = n_pairs - n_doc_pairs - n_coll_pairs
    q = (n_doc_pairs * p_doc + n_coll_pairs * S + n_cross / K) / n_pairs
    exact = {
        "pi0": 1 / K,
        "pi_last0": 1 / K,
        "pi0_sq": (a + 1) / (K * (K * a + 1)),
        "pi_sq_sum": S,
        "topic0_frac": 1 / K,
        "word0_topic0_frac": 1 / (K * V),
        "same_topic_in_doc": p_doc,
        "doc0_tok01_same_topic": p_doc,
        "same_topic_across_docs": S,
        "doc01_boundary_same_topic": S,
        "doc0_tok01_same_word": p_doc * (eta + 1) / (V * eta + 1) + (1 - p_doc) / V,
        "same_word": q * (eta + 1) / (V * eta + 1) + (1 - q) / V,
    }
    for name, value in exact.items():
        z = (g[name].mean() - value) / (g[name].std() / math.sqrt(M))
        assert abs(z) < Z_MAX, (name, g[name].mean(), value, z)


def test_word_redraw_step_is_exact():
    # Step (b) alone must be an exact draw of w | z: with a transition that
    # does nothing, z stays at its first value and the words are redrawn
    # independently every step. Given z, P(w_i = w_j) = (eta + 1) / (V eta
    # + 1) if z_i = z_j, else 1 / V; the pair average is checked against
    # that, and the count tables against the tallies (inside the chain).
    spec, m = LDA_SPEC, LDA_MODEL

    class _Identity:
        def start(self, state, pi0, rng):
            pass

        def __call__(self, state):
            pass

        def pi(self):
            return None

    T = 20_000
    _, z, w = _successive_conditional(spec, m, _Identity(), T, 6)
    assert (z == z[0]).all()
    V, eta = spec.V, m.eta
    same = (z[0][:, None] == z[0][None, :])[np.triu_indices(spec.N, 1)]
    expect = np.where(same, (eta + 1) / (V * eta + 1), 1 / V).mean()
    got = _pair_fraction((w[:, :, None] == np.arange(V)).sum(axis=1).astype(float), spec.N)
    z_stat = (got.mean() - expect) / (got.std() / math.sqrt(T))  # independent draws
    assert abs(z_stat) < Z_MAX, z_stat


# ------------------------------------------------- Geweke: the samplers
# Observed z-statistics with these seeds are in the module docstring; print
# them with ``pytest -s``.
def test_geweke_lda_gibbs_sweep():
    zs = _run_geweke(
        LDA_SPEC, LDA_MODEL, _LDATransition(LDA_SPEC, LDA_MODEL, seed=11),
        T=60_000, M=M_PRIOR, seed=10,
    )
    _assert_geweke_passes(zs, "LDAGibbs sweep")


def test_geweke_clda_ags():
    tr = _CLDATransition(CLDA_SPEC, CLDA_MODEL, seed=21, algorithm="ags")
    zs = _run_geweke(CLDA_SPEC, CLDA_MODEL, tr, T=60_000, M=M_PRIOR, seed=20)
    _assert_geweke_passes(zs, "CompoundLDA AGS")


def test_geweke_clda_mgs():
    # MMALA moves pi slowly (integrated autocorrelation ~25 sweeps for the
    # pi statistics), so the 50 batches are 300 sweeps long; a sweep with
    # the MMALA step costs ~150 us, 10 times a plain sweep.
    tr = _CLDATransition(CLDA_SPEC, CLDA_MODEL, seed=31, algorithm="mgs", step_size=MGS_STEP)
    zs = _run_geweke(CLDA_SPEC, CLDA_MODEL, tr, T=15_000, M=M_PRIOR, seed=30)
    mm = tr.run.update.mmala
    rate = mm.n_accepted / mm.n_proposed
    assert 0.3 < rate < 0.7, rate  # the fixed step is sensible
    assert np.all(mm.step_size == MGS_STEP)  # not adapted: a fixed MH kernel
    _assert_geweke_passes(zs, f"CompoundLDA MGS (acceptance {rate:.3f})")


# ------------------------------------------ Geweke: a second regime (slow)
# Two topics, three words, longer documents, three collections, a larger
# gamma, and alpha < 1 for AGS (pi_j often near a vertex, Antoniak counts
# with tiny concentrations gamma pi_jk). MGS runs with alpha = 1 here:
# with alpha < 1 its target |varphi|^(alpha - 1) is unbounded at 0 and the
# MMALA chain, although pi-invariant, can stick for thousands of sweeps
# once sum_k |varphi_jk| is near 0 (observed: a run of 9025 consecutive
# rejections at alpha = 0.5, gamma = 4, step 0.5), so batch means would
# understate its Monte Carlo error.
LDA2_SPEC = _Spec(J=1, D=5, L=5, K=2, V=3)
LDA2_MODEL = SimpleNamespace(alpha=np.array([0.2, 0.9]), gamma=None, eta=0.3)
CLDA2_SPEC = _Spec(J=3, D=2, L=5, K=2, V=3)
AGS2_MODEL = SimpleNamespace(alpha=0.5, gamma=4.0, eta=0.3)
MGS2_MODEL = SimpleNamespace(alpha=1.0, gamma=4.0, eta=0.3)


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["lda", "ags", "mgs"])
def test_geweke_second_regime(sampler):
    if sampler == "lda":
        spec, model, T = LDA2_SPEC, LDA2_MODEL, 80_000
        tr = _LDATransition(spec, model, seed=71)
    elif sampler == "ags":
        spec, model, T = CLDA2_SPEC, AGS2_MODEL, 80_000
        tr = _CLDATransition(spec, model, seed=72, algorithm="ags")
    else:
        spec, model, T = CLDA2_SPEC, MGS2_MODEL, 25_000
        tr = _CLDATransition(spec, model, seed=73, algorithm="mgs", step_size=MGS_STEP)
    zs = _run_geweke(spec, model, tr, T=T, M=M_PRIOR, seed=70)
    label = f"second regime, {sampler}"
    if sampler == "mgs":
        mm = tr.run.update.mmala
        label += f" (acceptance {mm.n_accepted / mm.n_proposed:.3f})"
    _assert_geweke_passes(zs, label)


# ----------------------------------------- the pi update alone, exactly
# Two collections, K = 2, documents of the collections interleaved (so
# that a mix-up of doc_group rows would show): with z held fixed, the pi
# update must leave p(pi_j | z) invariant, and for K = 2 that posterior is
# one-dimensional,
#     p(pi_j0 | z) ∝ pi^(alpha-1) (1-pi)^(alpha-1)
#                    prod_d (gamma pi)^(n_jd0 rising) (gamma (1-pi))^(n_jd1 rising),
# so its moments follow by quadrature. This checks the pi step in
# isolation, with more precision than the joint test.
_PI_NDK = np.array([[3, 0], [2, 2], [1, 2], [5, 0], [0, 4]], dtype=np.int32)
_PI_GROUP = np.array([0, 1, 0, 1, 0], dtype=np.int32)


def _exact_pi_moments(alpha, gamma):
    from scipy import integrate

    out = []
    for j in range(2):
        rows = _PI_NDK[_PI_GROUP == j]

        def lik(p, rows=rows):
            v = 1.0
            for n0, n1 in rows:
                for m in range(n0):
                    v *= gamma * p + m
                for m in range(n1):
                    v *= gamma * (1 - p) + m
            return v

        kw = dict(weight="alg", wvar=(alpha - 1, alpha - 1))  # the Dir(alpha) part
        Z = integrate.quad(lik, 0, 1, **kw)[0]
        m1 = integrate.quad(lambda p: p * lik(p), 0, 1, **kw)[0] / Z
        m2 = integrate.quad(lambda p: p * p * lik(p), 0, 1, **kw)[0] / Z
        out.append((m1, m2))
    return np.array(out)  # (J, 2): E pi_j0, E pi_j0^2


@pytest.mark.parametrize("algorithm, T", [("ags", 40_000), ("mgs", 12_000)])
def test_pi_update_leaves_exact_posterior_invariant(algorithm, T):
    # Observed (seeded): AGS max |z| 0.63, MGS 0.66 over the 4 moments; the
    # same check with minimal-path tables gives |z| ~ 70, and with MMALA's
    # proposal log-determinant dropped |z| = 7.4.
    from sklearn_clda import _sampling

    alpha, gamma = 1.0, 1.5
    exact = _exact_pi_moments(alpha, gamma)
    est = CompoundLDA(n_components=2, alpha=alpha, gamma=gamma, algorithm=algorithm,
                      step_size=MGS_STEP, adapt_step_size=False)
    run = _new_run(est, 3, 2)
    state = SimpleNamespace(ndk=_PI_NDK, doc_group=_PI_GROUP)
    rng = np.random.default_rng(7)
    bitgen = np.random.PCG64(8)
    # Start at a prior draw and discard 500 steps (the posterior is close).
    pi0 = _dirichlet(rng, np.full((2, 2), alpha))
    run.pi = pi0
    if algorithm == "mgs":
        run.update.mmala.varphi = pi0 * rng.standard_gamma(2 * alpha, size=(2, 1))
    n = _PI_NDK.ravel().astype(np.int64)
    cell = (_PI_GROUP[:, None] * 2 + np.arange(2)).ravel()
    burn = 500
    draws = np.empty((T, 2))
    for t in range(burn + T):
        if algorithm == "ags":
            # The kernel's table step: s_jdk ~ Antoniak(n_jdk, gamma pi_jk),
            # summed over the documents of each collection.
            conc = np.ascontiguousarray((est._sweep_prior(run).ravel())[cell])
            s = _sampling.crp_tables(n, conc, bitgen)
            tables = np.bincount(cell, weights=s, minlength=4).astype(np.int64).reshape(2, 2)
        else:
            tables = np.zeros((0, 2), dtype=np.int64)
        est._after_sweep(run, t + 1, tables, rng, state)
        if t >= burn:
            draws[t - burn] = run.pi[:, 0]
    zs = {}
    for j in range(2):
        for power in (1, 2):
            g = draws[:, j] ** power
            mean, var = _chain_mean(g)
            zs[f"pi_{j}0^{power}"] = float((exact[j, power - 1] - mean) / math.sqrt(var))
    print(algorithm, _fmt(zs))
    assert max(abs(v) for v in zs.values()) < Z_MAX, zs


# ----------------------------------------------------- Geweke: power
# Each runs the same harness with one deliberately wrong ingredient and
# must produce some |z| > 8 (probability ~1e-15 per statistic under a
# correct sampler) with a chain shorter than the correct tests use.
def test_geweke_detects_sweep_with_wrong_eta():
    # The sweep is told eta = 2 * 0.5 while the data are generated with 0.5
    # (a prior mismatch between the sampler and the model).
    tr = _LDATransition(LDA_SPEC, LDA_MODEL, seed=41, eta_used=2 * LDA_MODEL.eta)
    zs = _run_geweke(LDA_SPEC, LDA_MODEL, tr, T=20_000, M=M_PRIOR // 2, seed=40)
    _assert_geweke_detects(zs, "LDA sweep with eta doubled")


def _minimal_path_tables(tables, state):
    """The "minimal path" approximation s_jdk = 1[n_jdk > 0] instead of Antoniak draws."""
    out = np.zeros_like(tables)
    np.add.at(out, state.doc_group, (state.ndk > 0).astype(np.int64))
    return out


def test_geweke_detects_ags_minimal_path_tables():
    # A plausible shortcut (exact only as gamma pi_jk -> 0): one table per
    # used topic and document, then pi_j ~ Dir(alpha + sum_d 1[n_jdk > 0]).
    tr = _CLDATransition(CLDA_SPEC, CLDA_MODEL, seed=51, algorithm="ags",
                         tables_hook=_minimal_path_tables)
    zs = _run_geweke(CLDA_SPEC, CLDA_MODEL, tr, T=5_000, M=M_PRIOR // 2, seed=50)
    _assert_geweke_detects(zs, "AGS with minimal-path tables")


def _log_q_without_log_det(to, frm, mu, step):
    """MMALA's proposal log density missing its -0.5 sum log|varphi| term."""
    return -((to - mu) ** 2 / np.abs(frm)).sum(axis=1) / (2.0 * step**2)


def test_geweke_detects_mmala_without_proposal_log_det():
    # A classic position-dependent-metric slip: the Hastings ratio omits the
    # normalizing determinant of N(mu, eps^2 diag|varphi|), which differs
    # between the forward and the reverse move.
    with mock.patch.object(MMALAState, "_log_q", staticmethod(_log_q_without_log_det)):
        tr = _CLDATransition(CLDA_SPEC, CLDA_MODEL, seed=61, algorithm="mgs",
                             step_size=MGS_STEP)
        zs = _run_geweke(CLDA_SPEC, CLDA_MODEL, tr, T=5_000, M=M_PRIOR // 2, seed=60)
    _assert_geweke_detects(zs, "MGS with the proposal's log-determinant dropped")
