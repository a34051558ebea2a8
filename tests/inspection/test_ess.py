"""effective_sample_size: hand-computed cases and AR(1) chains of known ESS."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.signal import lfilter

from sklearn_clda.inspection import effective_sample_size
from sklearn_clda.inspection._ess import _integrated_time


def ar1_chains(phi, n_draws, shape, seed):
    """Stationary AR(1) chains ``x_t = phi x_{t-1} + e_t`` along axis 0."""
    rng = np.random.default_rng(seed)
    burn = 500
    noise = rng.standard_normal((n_draws + burn, *shape))
    return lfilter([1.0], [1.0, -phi], noise, axis=0)[burn:]


@pytest.mark.parametrize("phi", [0.9, 0.5, 0.0, -0.3, -0.5])
def test_ar1_chains_have_the_known_ess(phi):
    # For AR(1), rho_t = phi^t, tau = 1 + 2 sum_t phi^t = (1 + phi) / (1 - phi)
    # and ESS = n (1 - phi) / (1 + phi). The mean over 400 chains of 2000 draws
    # is within 10% of it (measured: 2-5% low, the usual truncation bias of
    # Geyer's estimator; single chains scatter by 7-22%). Dropping the factor 2
    # of tau (tau = 1 + sum_t rho_t) is off by 30% or more for every phi here
    # but 0: (1 + 2 s) / (1 + s) with s = phi / (1 - phi).
    n = 2000
    ess = effective_sample_size(ar1_chains(phi, n, (20, 20), seed=1))
    assert ess.shape == (20, 20)
    expected = n * (1 - phi) / (1 + phi)
    assert abs(ess.mean() / expected - 1) < 0.10


def test_hand_computed_four_draws():
    # x = 1, 2, 3, 4: centred (-1.5, -0.5, 0.5, 1.5), autocovariances / n:
    # c0 = 5 / 4, c1 = 1.25 / 4, c2 = -1.5 / 4, c3 = -2.25 / 4, so
    # rho = (1, 0.25, -0.3, -0.45); P0 = 1.25 > 0, P1 = -0.75 stops;
    # tau = -1 + 2 * 1.25 = 1.5 and ESS = 4 / 1.5.
    assert_allclose(effective_sample_size([1.0, 2.0, 3.0, 4.0]), 4 / 1.5)


def test_initial_monotone_sequence_by_hand():
    # Pairs: P0 = 1 + 0.5 = 1.5, P1 = 0.1 + 0.05 = 0.15, P2 = 0.2 + 0.2 = 0.4,
    # P3 = -0.5 + 0 = -0.5 (stops). Monotone: P2 is lowered to 0.15.
    # tau = -1 + 2 (1.5 + 0.15 + 0.15) = 2.6.
    rho = np.array([1.0, 0.5, 0.1, 0.05, 0.2, 0.2, -0.5, 0.0, 0.3, 0.3])
    assert_allclose(_integrated_time(rho), 2.6)
    # Vectorized over trailing axes.
    assert_allclose(_integrated_time(np.stack([rho, rho], axis=1)), [2.6, 2.6])


def test_vectorized_equals_one_chain_at_a_time():
    draws = ar1_chains(0.6, 300, (3, 4), seed=2)
    ess = effective_sample_size(draws)
    for j in range(3):
        for k in range(4):
            assert_allclose(ess[j, k], effective_sample_size(draws[:, j, k]))


def test_independent_draws_have_ess_near_n():
    rng = np.random.default_rng(3)
    ess = effective_sample_size(rng.standard_normal((1000, 50)))
    assert abs(ess.mean() / 1000 - 1) < 0.1


def test_antithetic_chain_is_capped_at_n_log10_n():
    draws = np.tile([0.0, 1.0], 50)  # rho_1 = -0.98: tau would be ~0
    assert_allclose(effective_sample_size(draws), 100 * np.log10(100))


def test_one_dimensional_input_gives_a_scalar():
    ess = effective_sample_size(np.arange(10.0) % 3)
    assert np.ndim(ess) == 0


def test_constant_chain_has_no_ess():
    draws = np.ones((20, 2))
    draws[:, 1] = np.arange(20) % 2
    ess = effective_sample_size(draws)
    assert np.isnan(ess[0]) and np.isfinite(ess[1])


@pytest.mark.parametrize(
    "draws, match",
    [([1.0, 2.0, 3.0], "at least 4 draws"), (3.0, "array-like"),
     ([1.0, np.nan, 2.0, 3.0], "NaN or infinite"),
     (["1", "2", "3", "4"], "effective_sample_size needs real-valued draws, got an array "
                            "of dtype <U1"),
     (np.arange(4) + 1j, "real-valued draws, got an array of dtype complex128"),
     ([[1.0, 2.0, 3.0, 4.0], [1.0]], "effective_sample_size needs an array of draws")],
)
def test_bad_draws_raise(draws, match):
    with pytest.raises(ValueError, match=match):
        effective_sample_size(draws)


@pytest.mark.parametrize("scale", [1e-200, 1e-170, 1e-5, 1e160, 1e200, 1e307])
def test_ess_does_not_depend_on_the_scale_of_the_draws(scale):
    """Draws near the float limits gave the n log10(n) ceiling (their
    autocovariances underflowed or overflowed), and draws of about 1e307
    an overflowing mean (a NaN ESS): the ESS is that of the same draws at
    unit scale, for one chain and for several."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 3))
    # (at 1e307 the 200 draws, all near 3e307, sum to more than 1e308)
    np.testing.assert_allclose(effective_sample_size(scale * (x / 5 + 3)),
                               effective_sample_size(x), rtol=1e-9)
    chains = rng.standard_normal((3, 200))
    np.testing.assert_allclose(effective_sample_size(scale * chains, multichain=True),
                               effective_sample_size(chains, multichain=True), rtol=1e-9)
