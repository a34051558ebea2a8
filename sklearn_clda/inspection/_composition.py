"""The method of composition's regressions: one weighted least-squares fit
of the topic shares per draw, with heteroskedasticity-robust errors, and
the mixture of the fits' sampling distributions."""

import numpy as np
import scipy.linalg
import scipy.special

__all__ = []


class WeightedFits:
    """Weighted least-squares fits of every topic's share on ``design``,
    one per draw of the shares, with HC1 sandwich standard errors of the
    coefficients or of combinations of them (``contrasts``); the draws
    arrive in pieces of rows (:meth:`add`), and no draw is ever whole in
    memory.

    For draw ``s`` with shares ``R`` (n_docs, K), the coefficients are
    ``B = M @ design.T @ (w * R)`` with ``M = inv(design.T @ (w * design))``,
    the values ``C.T @ B`` (``C`` the contrasts, the identity by default:
    the coefficients themselves) and their variances the diagonal of ``C.T
    @ M @ design.T @ diag(w**2 * E_k**2) @ design @ M @ C * n / (n - p)``,
    ``E = R - design @ B``: equal to ``np.linalg.lstsq`` on the rows scaled
    by ``sqrt(w)`` and the sandwich written out. The squared residuals are
    expanded in ``R`` so that the sums are taken before ``B`` is known.

    Parameters
    ----------
    design : ndarray of shape (n_docs, p)
    weights : ndarray of shape (n_docs,), positive
    n_samples, n_topics : int
    caller : str
        For the error of a design too near singular to factor.
    contrasts : ndarray of shape (p, n_values), default=None
        The combinations of the coefficients wanted, a column each (the
        design rows of points to predict at, say); None for the
        coefficients.
    """

    def __init__(self, design, weights, n_samples, n_topics, caller, contrasts=None):
        p = design.shape[1]
        try:
            factor = scipy.linalg.cho_factor(design.T @ (weights[:, None] * design),
                                             lower=True)
        except np.linalg.LinAlgError:
            raise ValueError(
                f"covariates passed to {caller} are so nearly collinear that their "
                "least-squares fit is not defined in floating point; center and scale "
                "them, or leave one of the near-copies out."
            ) from None
        self.bread = scipy.linalg.cho_solve(factor, np.eye(p))
        self.design, self.weights, self.contrasts = design, weights, contrasts
        lever = self.bread if contrasts is None else self.bread @ contrasts
        # q[d, g] = w_d^2 (design_d @ M @ C)_g^2: document d's part of variance g
        q = (weights[:, None] * (design @ lever)) ** 2
        self._q = q
        n_values = q.shape[1]
        self.cross = np.zeros((n_samples, p, n_topics))
        self.squares = np.zeros((n_samples, n_values, n_topics))
        self.mixed = np.zeros((n_samples, n_values, p, n_topics))
        # fixed[g, j, l] = sum_d q[d, g] design[d, j] design[d, l], by BLAS
        self.fixed = np.stack([(q[:, g, None] * design).T @ design for g in range(n_values)])

    def add(self, lo, hi, s, shares):
        """Add draw ``s``'s shares (hi - lo, K) of documents ``lo:hi``."""
        design, q = self.design[lo:hi], self._q[lo:hi]
        self.cross[s] += design.T @ (self.weights[lo:hi, None] * shares)
        self.squares[s] += q.T @ (shares * shares)
        # mixed[s, g, j] += sum_d q[d, g] design[d, j] shares[d]: one product
        weighted = (q[:, :, None] * design[:, None, :]).reshape(hi - lo, -1)
        self.mixed[s] += (weighted.T @ shares).reshape(self.mixed.shape[1:])

    def coefficients(self):
        """``(values, scale)``, each (n_samples, n_values, K): every draw's
        coefficients (or their combinations, with ``contrasts``) and their
        robust standard errors."""
        n, p = self.design.shape
        coef = np.einsum("ij,sjk->sik", self.bread, self.cross)
        variance = (self.squares - 2.0 * np.einsum("sgjk,sjk->sgk", self.mixed, coef)
                    + np.einsum("gjl,sjk,slk->sgk", self.fixed, coef, coef))
        values = coef if self.contrasts is None else np.einsum("jg,sjk->sgk",
                                                                 self.contrasts, coef)
        return values, np.sqrt(np.maximum(variance, 0.0) * n / (n - p))


def mixture_cdf(q, coef, scale, df):
    """``P(beta <= q)`` under the equal mixture over axis 0 of the scaled
    Student t distributions ``coef[s] + scale[s] * t_df``; one of scale 0
    is a step at its center."""
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (q - coef) / scale
    return np.where(scale > 0, scipy.special.stdtr(df, z), (q >= coef)).mean(axis=0)


def mixture_quantile(alpha, coef, scale, df):
    """The ``alpha`` quantile of the mixture of :func:`mixture_cdf`, by 100
    bisections between bounds 100 scales beyond every component."""
    low = (coef - 100 * scale).min(axis=0)
    high = (coef + 100 * scale).max(axis=0)
    for _ in range(100):
        mid = 0.5 * (low + high)
        below = mixture_cdf(mid, coef, scale, df) < alpha
        low, high = np.where(below, mid, low), np.where(below, high, mid)
    return 0.5 * (low + high)


def composition_summary(coef, scale, ci, df):
    """``(estimate, std_error, lower, upper, p_value)`` of each coefficient
    under the method of composition, exactly for the draws of the shares
    made: the coefficient's distribution is the equal mixture of each
    draw's sampling distribution ``coef[s] + scale[s] * t_df`` (what one
    draw per fit samples, without that draw's noise). Its mean, standard
    deviation, ``ci`` equal-tailed interval and two-sided tail mass at 0
    (twice the smaller side)."""
    estimate = coef.mean(axis=0)
    t_variance = df / (df - 2.0) if df > 2 else np.inf
    std_error = np.sqrt(t_variance * (scale ** 2).mean(axis=0) + coef.var(axis=0))
    tail = (1.0 - ci) / 2.0
    lower = mixture_quantile(tail, coef, scale, df)
    upper = mixture_quantile(1.0 - tail, coef, scale, df)
    at_zero = mixture_cdf(0.0, coef, scale, df)
    p_value = np.minimum(1.0, 2.0 * np.minimum(at_zero, 1.0 - at_zero))
    return estimate, std_error, lower, upper, p_value
