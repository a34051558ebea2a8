"""Effective sample size of MCMC draws (Geyer's initial monotone sequence),
of one chain or several."""

import numpy as np
from sklearn.utils._param_validation import validate_params

from ._utils import MIN_DRAWS, real_draws

__all__ = ["effective_sample_size"]


def _autocovariance(centred):
    """Biased autocovariances ``sum_t x_t x_{t+k} / n`` at lags 0..n-1 (FFT)."""
    n = centred.shape[0]
    # Zero-padding to at least 2n - 1 turns the circular correlation into
    # the linear one.
    n_fft = 1 << (2 * n - 1).bit_length()
    spectrum = np.fft.rfft(centred, n=n_fft, axis=0)
    return np.fft.irfft(spectrum * spectrum.conj(), n=n_fft, axis=0)[:n] / n


def _integrated_time(rho):
    """``tau = -1 + 2 sum_m P_m`` over Geyer's initial monotone sequence of
    pair sums ``P_m = rho_{2m} + rho_{2m+1}`` (``rho`` has lags on axis 0)."""
    n_pairs = rho.shape[0] // 2
    pairs = rho[0 : 2 * n_pairs : 2] + rho[1 : 2 * n_pairs : 2]
    # Initial positive sequence: the pairs before the first non-positive one.
    initial = np.cumprod(pairs > 0, axis=0).astype(bool)
    # Initial monotone sequence: each pair at most the previous ones.
    monotone = np.minimum.accumulate(pairs, axis=0)
    return -1.0 + 2.0 * np.where(initial, monotone, 0.0).sum(axis=0)


def _rescaled(x, axis):
    """``x`` shifted and scaled so that each quantity's draws (over ``axis``)
    lie in [-1, 1] around 0: the ESS does not change, and products of
    draws near the float limits (1e-170, 1e308) neither underflow nor
    overflow. The draws are brought to [-1, 1] before they are centred, so
    that their sum (the mean) cannot overflow either."""
    for centre in (False, True):
        if centre:
            x = x - x.mean(axis=axis, keepdims=True)
        scale = np.abs(x).max(axis=axis, keepdims=True)
        x = x / np.where(scale > 0, scale, 1.0)
    return x


def _multichain_correlations(x):
    """Autocorrelations ``rho_t`` of chains of shape (M, n, ...), lags on axis 0,
    that count the variance between the chains (Stan's estimator)::

        rho_t = 1 - (W - mean_c(acov_c[t])) / var_plus,   rho_0 = 1

    with ``W`` the mean within-chain variance and ``var_plus = (n - 1) / n
    * W + var(chain means)``. Also returns where ``var_plus`` is 0."""
    n = x.shape[1]
    acov = np.stack([_autocovariance(chain - chain.mean(axis=0)) for chain in x])
    within = acov[:, 0].mean(axis=0) * n / (n - 1)
    between = x.mean(axis=1).var(axis=0, ddof=1) if x.shape[0] > 1 else 0.0
    var_plus = (n - 1) / n * within + between
    constant = var_plus == 0
    rho = 1.0 - (within - acov.mean(axis=0)) / np.where(constant, 1.0, var_plus)
    rho[0] = 1.0
    return rho, constant


@validate_params({"draws": ["array-like"], "multichain": ["boolean"]},
                 prefer_skip_nested_validation=True)
def effective_sample_size(draws, *, multichain=False):
    """Effective sample size (ESS) of the draws of one or several Markov chains.

    The number of independent draws that would estimate the mean as
    precisely as the given autocorrelated ones::

        ESS = n / tau,    tau = 1 + 2 * sum_{t >= 1} rho_t

    where ``rho_t`` is the autocorrelation at lag ``t`` and ``tau`` the
    integrated autocorrelation time. The infinite sum is estimated with
    Geyer's (1992) initial monotone sequence estimator, as in Stan and
    ArviZ (for one chain, without splitting or rank normalization):

    1. ``rho_t = c_t / c_0`` with the autocovariances
       ``c_t = sum_{i=0}^{n-t-1} (x_i - m) (x_{i+t} - m) / n``;
    2. pair sums ``P_m = rho_{2m} + rho_{2m+1}``, kept up to (not
       including) the first ``P_m <= 0``: for a reversible chain the true
       pair sums are positive and decreasing, so later ones are noise;
    3. each kept ``P_m`` is lowered to the smallest of ``P_0..P_m``
       (monotone);
    4. ``tau = -1 + 2 * sum_m P_m`` (the ``-1`` removes ``rho_0 = 1``,
       counted twice), and ``ESS = n / tau``.

    Anticorrelated chains (``rho_1 < 0``) have ``ESS > n``. As in Stan,
    ``tau`` is bounded below by ``1 / log10(n)``, so that ``ESS <= n
    log10(n)`` (and ``ESS <= n`` for fewer than 10 draws).

    With ``multichain=True``, ``draws`` holds ``M`` chains of ``n`` draws
    and ``rho_t`` is Stan's multi-chain estimate, ``1 - (W - mean_c
    c_{c,t}) / var_plus``, where ``W`` is the mean within-chain variance
    and ``var_plus = (n - 1) / n * W + var(chain means)``: chains that
    disagree raise ``var_plus`` and lower the ESS, so that draws pooled
    from chains stuck in different places do not pass for independent
    ones. Then ``ESS = M n / tau``.

    Parameters
    ----------
    draws : array-like of shape (n_draws,) or (n_draws, ...)
        The draws in sampling order along the first axis (at least 4).
        Further axes are independent scalar chains, e.g. the kept draws
        ``collection_topic_samples_`` of a
        :class:`~sklearn_clda.CompoundLDA`, of shape ``(n_draws,
        n_collections, n_components)``. With ``multichain=True``, of shape
        ``(n_chains, n_draws, ...)``: several chains of the same length
        (e.g. :func:`align_chains`' draws).

    multichain : bool, default=False
        Whether the first axis of ``draws`` indexes chains (and the second
        the draws).

    Returns
    -------
    ess : float or ndarray of shape ``draws.shape[1:]``
        The effective sample size of each chain (``draws.shape[2:]`` and
        of all chains together with ``multichain=True``). A chain whose
        draws are all equal has no defined ESS: NaN.

    See Also
    --------
    sklearn_clda.plotting.autocorrelation : The autocorrelations ``rho_t``.
    collection_topic_summary : Posterior intervals of ``pi`` with their ESS.
    rhat : Whether several chains agree.

    Notes
    -----
    For an AR(1) chain ``x_t = phi x_{t-1} + e_t``, ``rho_t = phi^t`` and
    ``ESS = n (1 - phi) / (1 + phi)`` for long chains; the tests check the
    estimator against this on many chains, for positive, zero and negative
    ``phi``.

    A posterior interval's ends are quantiles, estimated less precisely
    than the mean: an ESS of a few hundred gives usable 90% intervals,
    while tens of effective draws leave their ends uncertain.

    References
    ----------
    .. [1] C. J. Geyer, "Practical Markov chain Monte Carlo", Statistical
       Science 7(4), 1992.
    .. [2] A. Vehtari, A. Gelman, D. Simpson, B. Carpenter and
       P.-C. Buerkner, "Rank-normalization, folding, and localization: an
       improved R-hat for assessing convergence of MCMC", Bayesian
       Analysis 16(2), 2021.

    Examples
    --------
    A chain of four draws: ``rho = (1, 0.25, -0.3, -0.45)``, so ``P_0 =
    1.25`` and ``P_1 = -0.75`` stops the sum; ``tau = -1 + 2 * 1.25 = 1.5``
    and ``ESS = 4 / 1.5``:

    >>> import numpy as np
    >>> from sklearn_clda.inspection import effective_sample_size
    >>> round(float(effective_sample_size([1.0, 2.0, 3.0, 4.0])), 4)
    2.6667

    An AR(1) chain with ``phi = 0.5`` has ``ESS = n / 3``:

    >>> rng = np.random.default_rng(0)
    >>> x = np.zeros(20000)
    >>> for t in range(1, x.size):
    ...     x[t] = 0.5 * x[t - 1] + rng.standard_normal()
    >>> ess = effective_sample_size(x)
    >>> bool(abs(ess / (x.size / 3) - 1) < 0.1)
    True

    Independent chains along the other axes, e.g. draws of shape
    (n_draws, n_collections, n_components):

    >>> effective_sample_size(rng.random((500, 2, 3))).shape
    (2, 3)

    Four chains of 500 independent draws count about 2000; four chains
    that each sit in their own place count far fewer:

    >>> chains = rng.standard_normal((4, 500))
    >>> bool(1800 < effective_sample_size(chains, multichain=True) < 2200)
    True
    >>> bool(effective_sample_size(chains + 3 * np.arange(4)[:, None], multichain=True) < 50)
    True
    """
    x = real_draws(draws, "effective_sample_size")
    axis = 1 if multichain else 0
    if x.ndim <= axis or x.shape[axis] < MIN_DRAWS or x.shape[0] < 1:
        shape = "(n_chains, n_draws, ...)" if multichain else "(n_draws, ...)"
        raise ValueError(
            f"effective_sample_size needs draws of shape {shape} with at least "
            f"{MIN_DRAWS} draws, got an array of shape {x.shape}."
        )
    if not np.all(np.isfinite(x)):
        raise ValueError("effective_sample_size got NaN or infinite draws.")
    x = _rescaled(x, axis=tuple(range(axis + 1)))
    if multichain:
        n = x.shape[0] * x.shape[1]
        rho, constant = _multichain_correlations(x)
    else:
        n = x.shape[0]
        acov = _autocovariance(x - x.mean(axis=0))
        constant = np.ptp(x, axis=0) == 0
        rho = acov / np.where(constant, 1.0, acov[0])
    tau = np.maximum(_integrated_time(rho), 1.0 / max(np.log10(n), 1.0))
    ess = np.where(constant, np.nan, n / tau)
    return ess[()] if ess.ndim == 0 else ess
