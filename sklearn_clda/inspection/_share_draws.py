"""Draws of documents' topic shares given their words, with the topics held
fixed: under the model's prior, or under a prior whose mean follows the
documents' covariates (empirical Bayes, as stm's prevalence model)."""

import math

import numpy as np

from ._document_collections import _document_pieces
from ._fixed_topics import FixedTopicChains

__all__ = []

#: The covariate prior's smallest mean share, as a fraction of 1 / K: a
#: linear prediction below it (or below 0) is raised to it.
FLOOR = 0.01

#: The covariate prior is refitted until the pull of the model's prior on
#: the shares is expected to have shrunk below this fraction.
SETTLE = 0.01

#: Most refits of the covariate prior; past it a warning says the prior
#: has not settled.
MAX_ROUNDS = 50

#: Gibbs sweeps whose shares each refit of the covariate prior averages.
ROUND_SWEEPS = 2


class ModelPrior:
    """The documents' priors as the model gives them: document ``d``'s is
    ``rows[doc_rows[d]]`` (its collection's ``gamma * pi_j``, or ``alpha``)."""

    def __init__(self, rows, doc_rows):
        tiny = np.finfo(np.float64).tiny
        self.prior = np.ascontiguousarray(np.maximum(rows, tiny), dtype=np.float64)
        self.doc_rows = np.asarray(doc_rows, dtype=np.int64)
        self.mass = self.prior.sum(axis=1)[self.doc_rows]

    def rows(self, lo, hi):
        """``(prior, doc_prior)`` of documents ``lo:hi``, as
        :func:`~sklearn_clda._sampling.fixed_topics_sweep` takes them."""
        return self.prior, self.doc_rows[lo:hi]


class CovariatePrior:
    """Document ``d``'s prior ``mass[d] * mu_d``: the mean shares ``mu_d =
    design[d] @ coef`` (each raised to at least ``FLOOR / K``, then
    normalized), the mass that of the model's prior."""

    def __init__(self, design, mass, coef):
        self.design, self.mass, self.coef = design, mass, coef

    def rows(self, lo, hi):
        """``(prior, doc_prior)`` of documents ``lo:hi``: a row each."""
        mean = np.maximum(self.design[lo:hi] @ self.coef, FLOOR / self.coef.shape[1])
        mean /= mean.sum(axis=1, keepdims=True)
        return (np.ascontiguousarray(self.mass[lo:hi, None] * mean),
                np.arange(hi - lo, dtype=np.int64))


def _refits_needed(steps):
    """Refits for the pull left to fall below :data:`SETTLE`, from the
    changes ``steps`` (n, p, K) of successive refits: ``log(SETTLE) /
    log(c)`` with ``c`` the least-squares ratio of each change to the one
    before, at least 3."""
    before, after = steps[:-1], steps[1:]
    power = float((before * before).sum())
    c = float((after * before).sum()) / power if power > 0 else 0.0
    if c <= SETTLE:
        return 3
    if c >= 1.0:
        return MAX_ROUNDS + 1
    return max(3, math.ceil(math.log(SETTLE) / math.log(c)))


class ShareSampler:
    """A Gibbs chain of every document's topic assignments with the topics
    held fixed, in pieces of documents (:func:`_document_pieces`); only the
    assignments are kept between passes, about 12 bytes a token.

    Parameters
    ----------
    phi_t : ndarray of shape (V, K)
        Row ``w``: the topics' probabilities of word ``w``.
    counts : canonical CSR matrix of shape (n_docs, V)
    prior : ModelPrior
        The first state's prior (``first_prior``).
    rng : numpy Generator or RandomState
        The draws' source (``rng``).
    caller : str
        For the errors of :func:`_document_pieces`.
    """

    def __init__(self, phi_t, counts, prior, rng, caller):
        self.first_prior, self.rng = prior, rng
        self.n_topics = phi_t.shape[1]
        self.lengths = np.asarray(counts.sum(axis=1), dtype=np.float64).ravel()
        self.pieces = _document_pieces(counts, self.n_topics, 1, caller)
        self.chains = [FixedTopicChains(phi_t, counts[lo:hi], *prior.rows(lo, hi), rng)
                       for lo, hi in self.pieces]

    def passes(self, n_sweeps, prior):
        """``n_sweeps`` sweeps of every piece under ``prior``; yields, piece
        by piece, ``(lo, hi, alpha, sweeps)``: the piece's documents, their
        prior rows (n, K) and an iterator of each sweep's topic counts (one
        table, overwritten by the next sweep), to be run out before the
        next piece."""
        for (lo, hi), chain in zip(self.pieces, self.chains):
            rows, doc_prior = prior.rows(lo, hi)
            yield lo, hi, rows[doc_prior], chain.sweeps(n_sweeps, rows, doc_prior, self.rng)

    def burn(self, n_sweeps, prior):
        """Run ``n_sweeps`` sweeps of every piece under ``prior``, keeping
        nothing but the assignments."""
        for _, _, _, sweeps in self.passes(n_sweeps, prior):
            for _ in sweeps:
                pass

    def settle(self, design):
        """``(prior, settled)``: the :class:`CovariatePrior` on ``design``
        (the model's prior ``first_prior`` giving its mass) at which the
        least-squares fit of the documents' posterior mean
        shares to ``design`` gives back the prior's mean, found by refits
        (empirical Bayes), and whether they were enough.

        Each refit leaves a fraction ``c`` of what is left of the model
        prior's pull: about ``mass / (n + mass)`` for a document of ``n``
        tokens whose words tell its topics apart, more when they do not.
        ``c`` is measured as the ratio of successive refits' changes
        (``<d_r+1, d_r> / <d_r, d_r>`` over all of them: the sampling noise
        of two refits is uncorrelated, so noise alone measures 0), and the
        refits go on until ``c`` to their number is below :data:`SETTLE`,
        at least 3 and at most :data:`MAX_ROUNDS`."""
        mass = self.first_prior.mass
        inverse = np.linalg.pinv(design.T @ design)
        coefs = [self._refit(design, inverse, self.first_prior)]
        needed = 3
        while len(coefs) < min(needed, MAX_ROUNDS):
            coefs.append(self._refit(design, inverse, CovariatePrior(design, mass, coefs[-1])))
            if len(coefs) >= 3:
                needed = _refits_needed(np.diff(np.array(coefs), axis=0))
        return CovariatePrior(design, mass, coefs[-1]), needed <= MAX_ROUNDS

    def _refit(self, design, inverse, prior):
        """The least-squares coefficients (``inverse`` is ``pinv(design.T @
        design)``) of the documents' posterior mean shares under ``prior``,
        averaged over :data:`ROUND_SWEEPS` sweeps."""
        cross = np.zeros((design.shape[1], self.n_topics))
        for lo, hi, alpha, sweeps in self.passes(ROUND_SWEEPS, prior):
            mean = alpha * ROUND_SWEEPS
            for ndk in sweeps:
                mean += ndk
            mean /= mean.sum(axis=1, keepdims=True)
            cross += design[lo:hi].T @ mean
        return inverse @ cross

    def share_draws(self, n_samples, prior):
        """``n_samples`` sweeps of every piece under ``prior``; yields
        ``(lo, hi, s, shares)`` for each piece of documents ``lo:hi`` and
        sweep ``s``: the documents' shares of their tokens' topics in that
        sweep, ``n_dk / n_d`` (hi - lo, K), a draw of the topic counts from
        their posterior given the words."""
        for lo, hi, _, sweeps in self.passes(n_samples, prior):
            lengths = self.lengths[lo:hi, None]
            for s, ndk in enumerate(sweeps):
                yield lo, hi, s, ndk / lengths
