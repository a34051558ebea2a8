"""The samplers' updates of the collection mixtures ``pi``, one object per algorithm.

After every z-sweep, :class:`~sklearn_clda.CompoundLDA` hands the sweep's
statistics to the update of its ``algorithm``, which returns the new
``pi`` (one row per collection). Each update also says whether the sweep
must draw Antoniak table counts (``draw_tables``), what it adds to
``trace_`` at an evaluation (``trace_values``) and which fitted attributes
it leaves (``finish``).
"""

import numpy as np

from ._mgs import MMALAState

__all__ = ["PI_UPDATES"]

_TINY = np.finfo(np.float64).tiny


def _normalized(weights):
    """Rows of positive weights as mixtures; a weight below the smallest
    normal double is floored there so that every prior weight stays positive."""
    np.maximum(weights, _TINY, out=weights)
    return weights / weights.sum(axis=1, keepdims=True)


class AGSUpdate:
    """AGS (Algorithm gibbs-aux-pi-z): ``pi_j ~ Dirichlet(alpha + sum_d s_jdk)``
    from the sweep's exact Antoniak table counts, via normalized Gamma draws."""

    draw_tables = True

    def __init__(self, estimator, run):
        pass

    def step(self, run, sweep, tables, rng, state):
        return _normalized(rng.standard_gamma(run.alpha + tables))

    def trace_values(self):
        return {}

    def finish(self):
        return {}


class MGSUpdate:
    """MGS (Algorithm gibbs-mmala-pi-z): one Riemann-manifold MALA proposal per
    collection, its step adapted during burn-in when ``adapt_step_size``."""

    draw_tables = False

    def __init__(self, estimator, run):
        self.mmala = MMALAState(run.pi, run.alpha, estimator.step_size)
        self.adapt = estimator.adapt_step_size
        self.window = [0, 0]  # proposals and acceptances since the last evaluation

    def step(self, run, sweep, tables, rng, state):
        before = self.mmala.n_accepted
        pi = self.mmala.step(
            state.ndk, state.doc_group, run.alpha, run.gamma, rng,
            adapt=self.adapt and sweep <= run.burn_in,
        )
        self.window[0] += pi.shape[0]
        self.window[1] += self.mmala.n_accepted - before
        return _normalized(pi)

    def trace_values(self):
        proposed, accepted = self.window
        self.window = [0, 0]
        return {"acceptance_rate": accepted / proposed if proposed else np.nan}

    def finish(self):
        return {
            "acceptance_rate_": self.mmala.n_accepted / max(self.mmala.n_proposed, 1),
            "step_size_": self.mmala.step_size,
        }


PI_UPDATES = {"ags": AGSUpdate, "mgs": MGSUpdate}
