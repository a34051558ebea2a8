"""The MGS update of the collection mixtures: Riemann-manifold MALA on a reparametrized simplex.

The paper's Section "Metropolis Adjusted Langevin Monte Carlo" and appendix
"Langevin Monte Carlo": ``pi_j = |varphi_j| / sum_k |varphi_jk|`` with
``|varphi_jk| ~ Gamma(alpha, 1)`` i.i.d. (which keeps ``pi_j ~
Dirichlet(alpha)``), target density eq. posterior-pi-re-parametrization::

    log p(varphi_j | z) = sum_k [(alpha - 1) log|varphi_jk| - |varphi_jk|]
        + sum_d sum_k [lgamma(gamma pi_jk + n_jdk) - lgamma(gamma pi_jk)]

metric ``G = diag(|varphi_j|)^-1``, which gives the simplified drift
``mu_k = varphi_k + eps^2/2 |varphi_k| dL/dvarphi_k + eps^2/2 sign(varphi_k)``
and the proposal ``N(mu, eps^2 diag(|varphi_j|))``, accepted or rejected by
Metropolis-Hastings (eq. riemann-langevin-euler-reparam and
pi-transition-density-re-parameterization). One proposal per collection
per sweep, as in Algorithm gibbs-mmala-pi-z.
"""

import numpy as np
from scipy.special import digamma, gammaln

from ._hyper import group_topic_histogram

__all__ = ["MMALAState"]


_TARGET_ACCEPTANCE = 0.574  # optimal for MALA (Roberts and Rosenthal, 1998)

# The Langevin step epsilon: proposals move about epsilon * sqrt(|varphi|),
# so steps beyond these bounds never move or never get accepted, and their
# squares under- or overflow the proposal density.
MIN_STEP_SIZE = 1e-8
MAX_STEP_SIZE = 100.0


class MMALAState:
    """The reparametrized mixtures ``varphi`` (J, K) and the MMALA step.

    ``step_size`` holds one step per collection. While ``adapt`` is on
    (during burn-in) each step is moved by a Robbins-Monro update of its
    logarithm towards an acceptance rate of 0.574; frozen afterwards, the
    kernel is a fixed Metropolis-Hastings kernel.
    """

    def __init__(self, pi, alpha, step_size):
        # Start at the given mixtures with the prior mean of the total mass.
        self.varphi = pi * max(pi.shape[1] * alpha, 1e-3)
        self.step_size = np.full(pi.shape[0], float(step_size))
        self.n_proposed = 0
        self.n_accepted = 0
        self._n_adapt = 0

    @property
    def pi(self):
        a = np.abs(self.varphi)
        return a / a.sum(axis=1, keepdims=True)

    @staticmethod
    def _log_target_and_grad(varphi, hist, alpha, gamma, need_grad=True):
        """Per-collection log density (J,) and its gradient (J, K)."""
        J, K = varphi.shape
        jk, n, mult = hist
        a = np.abs(varphi)
        s = a.sum(axis=1, keepdims=True)
        pi = a / s
        x = gamma * pi.ravel()[jk]
        lik = np.bincount(jk, weights=mult * (gammaln(x + n) - gammaln(x)),
                          minlength=J * K).reshape(J, K)
        with np.errstate(divide="ignore"):
            log_a = np.log(a)
        logp = ((alpha - 1.0) * log_a - a).sum(axis=1) + lik.sum(axis=1)
        if not need_grad:
            return logp, None
        # A_jk = sum_d [psi(gamma pi_jk + n_jdk) - psi(gamma pi_jk)]
        A = np.bincount(jk, weights=mult * (digamma(x + n) - digamma(x)),
                        minlength=J * K).reshape(J, K)
        inner = gamma * A / s - gamma * (a * A).sum(axis=1, keepdims=True) / s**2
        grad = np.sign(varphi) * (inner + (alpha - 1.0) / a - 1.0)
        return logp, grad

    @staticmethod
    def _log_q(to, frm, mu, step):
        """log N(to | mu(frm), step^2 diag(|frm|)) up to a constant, per row.

        ``step`` has one entry per row.
        """
        a = np.abs(frm)
        return -0.5 * np.log(a).sum(axis=1) - ((to - mu) ** 2 / a).sum(axis=1) / (
            2.0 * step**2
        )

    @staticmethod
    def _drift(varphi, grad, step):
        return varphi + 0.5 * step[:, None] ** 2 * (np.abs(varphi) * grad + np.sign(varphi))

    def step(self, ndk, doc_group, alpha, gamma, rng, adapt=False):
        """One MMALA proposal per collection; returns the new ``pi``."""
        J = self.varphi.shape[0]
        step = self.step_size
        hist = group_topic_histogram(ndk, doc_group, J)
        cur = self.varphi
        logp_cur, grad_cur = self._log_target_and_grad(cur, hist, alpha, gamma)
        mu_cur = self._drift(cur, grad_cur, step)
        prop = mu_cur + step[:, None] * np.sqrt(np.abs(cur)) * rng.standard_normal(cur.shape)
        u = rng.random(J)
        valid = np.all(np.isfinite(prop) & (prop != 0.0), axis=1)
        accept = np.zeros(J, dtype=bool)
        if valid.any():
            p = prop[valid]
            logp_prop, grad_prop = self._log_target_and_grad(p, _subset(hist, valid, cur.shape[1]),
                                                             alpha, gamma)
            sv = step[valid]
            mu_prop = self._drift(p, grad_prop, sv)
            log_ratio = (
                logp_prop - logp_cur[valid]
                + self._log_q(cur[valid], p, mu_prop, sv)
                - self._log_q(p, cur[valid], mu_cur[valid], sv)
            )
            ok = np.isfinite(log_ratio) & (np.log(u[valid]) < log_ratio)
            accept[np.flatnonzero(valid)[ok]] = True
        self.varphi = np.where(accept[:, None], prop, cur)
        self.n_proposed += J
        self.n_accepted += int(accept.sum())
        if adapt:
            self._n_adapt += 1
            rate = self._n_adapt ** -0.6
            self.step_size = self.step_size * np.exp(rate * (accept - _TARGET_ACCEPTANCE))
        return self.pi


def _subset(hist, rows, K):
    """Restrict a (jk, n, mult) histogram to the collections in boolean ``rows``."""
    jk, n, mult = hist
    j = jk // K
    keep = rows[j]
    new_index = np.cumsum(rows) - 1
    return new_index[j[keep]] * K + jk[keep] % K, n[keep], mult[keep]
