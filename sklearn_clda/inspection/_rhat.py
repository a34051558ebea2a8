"""Convergence of several MCMC chains: the rank-normalized split R-hat."""

import numpy as np
from scipy.special import ndtri
from sklearn.utils._param_validation import validate_params

from ._ranks import average_ranks
from ._utils import MIN_DRAWS, real_draws

__all__ = ["rhat"]


def _split(chains):
    """Each chain's first and last halves as chains of their own (the middle
    draw of an odd count left out): shape (2 * n_chains, n_draws // 2, ...)."""
    half = chains.shape[1] // 2
    return np.concatenate([chains[:, :half], chains[:, chains.shape[1] - half:]], axis=0)


def _rank_normalize(chains):
    """Ranks of all draws together (ties averaged), mapped to normal scores by
    Blom's ``ndtri((rank - 3/8) / (S + 1/4))``; same shape. The draws are
    finite. An averaged rank is a multiple of 1/2 in [1, S], so the scores
    of those 2 S - 1 values are computed once and looked up (the same
    numbers, without an ``ndtri`` per draw)."""
    flat = chains.reshape(-1, *chains.shape[2:])
    n = flat.shape[0]
    scores = ndtri((np.arange(2 * n - 1) / 2.0 + 1.0 - 0.375) / (n + 0.25))
    places = (average_ranks(flat) * 2.0 - 2.0).astype(np.intp)
    return scores[places].reshape(chains.shape)


def _basic_rhat(chains):
    """Gelman-Rubin ``sqrt(var_plus / W)`` of chains of shape (C, n, ...):
    ``W`` the mean within-chain variance, ``var_plus = (n - 1) / n * W + B / n``
    with ``B / n`` the variance of the chain means. NaN where every draw is
    the same, inf where only the chains differ."""
    n = chains.shape[1]
    within = chains.var(axis=1, ddof=1).mean(axis=0)
    between = chains.mean(axis=1).var(axis=0, ddof=1)
    var_plus = (n - 1) / n * within + between
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.sqrt(var_plus / within)
    return np.where(var_plus == 0, np.nan, out)


@validate_params({"draws": ["array-like"]}, prefer_skip_nested_validation=True)
def rhat(draws):
    """Rank-normalized split R-hat of several chains (Vehtari et al. 2021).

    R-hat compares the variance between chains with the variance within
    them: close to 1 when every chain has explored the same distribution,
    larger when they disagree. Each chain is split into halves, so one
    chain that drifts (its first half unlike its second) is caught too.
    Following Vehtari et al., the draws are replaced by the normal scores
    of their ranks (robust to heavy tails), and the larger of two values is
    returned: R-hat of the normal scores (differences in location) and of
    the normal scores of the draws' distances from their median
    (differences in scale). Values above 1.01 say the chains have not
    mixed; the summaries of ``pi`` should then not be trusted.

    Parameters
    ----------
    draws : array-like of shape (n_chains, n_draws, ...)
        Draws of one or more chains of the same length, in sampling order
        along axis 1 (at least 4 draws). Further axes are independent
        quantities, e.g. the aligned draws of ``pi`` of several fits,
        ``(n_chains, n_draws, n_collections, n_components)``
        (:func:`align_chains`).

    Returns
    -------
    rhat : float or ndarray of shape ``draws.shape[2:]``
        R-hat of each quantity; NaN where all its draws are equal.

    See Also
    --------
    align_chains : Several fits of a CompoundLDA, with their topics lined up.
    effective_sample_size : The effective sample size, of one or several chains.

    Notes
    -----
    With chains ``x_c`` of ``n`` draws (the halves, after rank
    normalization), ``W`` the mean of their variances and ``B / n`` the
    variance of their means, ``R-hat = sqrt(((n - 1) / n * W + B / n) /
    W)``.

    References
    ----------
    .. [1] A. Vehtari, A. Gelman, D. Simpson, B. Carpenter and
       P.-C. Buerkner, "Rank-normalization, folding, and localization: an
       improved R-hat for assessing convergence of MCMC", Bayesian
       Analysis 16(2), 2021.

    Examples
    --------
    Four chains of the same distribution, and four that do not agree:

    >>> import numpy as np
    >>> from sklearn_clda.inspection import rhat
    >>> rng = np.random.default_rng(0)
    >>> same = rng.standard_normal((4, 1000))
    >>> bool(rhat(same) < 1.01)
    True
    >>> apart = same + np.arange(4)[:, None]
    >>> bool(rhat(apart) > 1.5)
    True

    One chain whose second half moved away from its first:

    >>> drift = np.concatenate([rng.standard_normal(500), 1 + rng.standard_normal(500)])
    >>> bool(rhat(drift[None]) > 1.1)
    True
    """
    x = real_draws(draws, "rhat")
    if x.ndim < 2 or x.shape[1] < MIN_DRAWS or x.shape[0] < 1:
        raise ValueError(
            f"rhat needs draws of shape (n_chains, n_draws, ...) with at least "
            f"{MIN_DRAWS} draws, got an array of shape {x.shape}."
        )
    if not np.all(np.isfinite(x)):
        raise ValueError("rhat got NaN or infinite draws.")
    if x.size == 0:  # no quantities (an empty trailing axis)
        return np.empty(x.shape[2:])
    if np.abs(x).max() > np.finfo(np.float64).max / 4:
        # R-hat works on ranks: halved draws have the same, and their
        # differences from the median below cannot overflow.
        x = x * 0.5
    halves = _split(x)
    bulk = _basic_rhat(_rank_normalize(halves))
    folded = np.abs(halves - np.median(halves.reshape(-1, *halves.shape[2:]), axis=0))
    tail = _basic_rhat(_rank_normalize(folded))
    flat = x.reshape(-1, *x.shape[2:])
    constant = (flat == flat[0]).all(axis=0)
    out = np.where(constant, np.nan, np.fmax(bulk, tail))
    return out[()] if out.ndim == 0 else out
