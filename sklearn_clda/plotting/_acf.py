"""Sample autocorrelation of MCMC draws."""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import validate_params

from .._corpus import StrictInterval

__all__ = ["autocorrelation"]


@validate_params(
    {
        "x": ["array-like"],
        "max_lag": [StrictInterval(Integral, 0, None, closed="left"), None],
    },
    prefer_skip_nested_validation=True,
)
def autocorrelation(x, max_lag=None):
    """Sample autocorrelation function (ACF) of a chain of draws.

    For a series ``x_0, ..., x_{n-1}`` with mean ``m``, the autocorrelation
    at lag ``k`` is::

        r_k = sum_{t=0}^{n-k-1} (x_t - m) (x_{t+k} - m) / sum_{t=0}^{n-1} (x_t - m)^2

    the usual biased estimator (the same denominator at every lag), which
    keeps ``|r_k| <= 1`` and ``r_0 = 1``. It is computed with the fast
    Fourier transform, in ``O(n log n)``.

    Parameters
    ----------
    x : array-like of shape (n_draws,) or (n_draws, ...)
        The draws, in sampling order along the first axis. Further axes
        are independent series (e.g. ``collection_topic_samples_`` of shape
        ``(n_draws, n_collections, n_components)``).

    max_lag : int, default=None
        Largest lag returned. ``None`` means ``n_draws - 1``; larger values
        are clipped to ``n_draws - 1``.

    Returns
    -------
    acf : ndarray of shape (max_lag + 1,) or (max_lag + 1, ...)
        ``acf[k]`` is the autocorrelation at lag ``k``; ``acf[0]`` is 1. A
        constant series has no defined autocorrelation: its lags ``>= 1``
        are NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_clda.plotting import autocorrelation
    >>> autocorrelation([1.0, 2.0, 3.0, 4.0], max_lag=2).round(3)
    array([ 1.  ,  0.25, -0.3 ])
    >>> rng = np.random.default_rng(0)
    >>> ar1 = np.zeros(2000)
    >>> for t in range(1, 2000):
    ...     ar1[t] = 0.8 * ar1[t - 1] + rng.standard_normal()
    >>> bool(abs(autocorrelation(ar1, max_lag=1)[1] - 0.8) < 0.05)
    True
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0 or x.shape[0] < 2:
        raise ValueError(
            "autocorrelation needs at least 2 draws along the first axis, got "
            f"an array of shape {x.shape}."
        )
    if not np.all(np.isfinite(x)):
        raise ValueError("autocorrelation got NaN or infinite values.")
    n = x.shape[0]
    max_lag = n - 1 if max_lag is None else min(int(max_lag), n - 1)

    centred = x - x.mean(axis=0)
    # Zero-padding to at least 2n - 1 turns the FFT's circular correlation
    # into the linear one.
    n_fft = 1 << (2 * n - 1).bit_length()
    spectrum = np.fft.rfft(centred, n=n_fft, axis=0)
    acov = np.fft.irfft(spectrum * spectrum.conj(), n=n_fft, axis=0)[: max_lag + 1]

    constant = np.ptp(x, axis=0) == 0
    variance = np.where(constant, 1.0, acov[0])
    acf = acov / variance
    acf[0] = 1.0
    acf[1:, ...] = np.where(constant, np.nan, acf[1:, ...])
    return acf
