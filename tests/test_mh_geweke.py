"""Geweke joint-distribution tests of the MH samplers (``sampler="mh"`` and
``sampler="sparse"``).

The harness of ``test_geweke.py`` (same tiny corpora, models, test
functions, thresholds and statistics; see its docstring) with the
transition's sweep run by ``_mh_sweeper._MHSweeper``, exactly what a fit
with ``sampler="mh"`` runs: LDAGibbs's sweep, and CompoundLDA AGS's sweep
with Antoniak table rows followed by ``_after_sweep`` (the pi update).

Two MH-specific points: the harness redraws the words between sweeps, so
the transition rebuilds the sweeper's tokens-by-word index before each
sweep (a fit builds it once: its words never change); and ``mh_steps=2``
(one word and one doc proposal per token, the default) and ``mh_steps=1``
(word proposals only) are both tested, so that each proposal's Hastings
ratio is checked on its own and together.

Observed with these seeds and 30,000 steps (``pytest -s``; the MH
kernel's uniforms from its SplitMix64 stream, see ``_mh_kernel.h``):
largest |z| 1.92 (LDA, mh_steps=1), 3.11 (LDA, mh_steps=2), 0.89 (AGS).
Power checks (some ``|z| > 8`` required): the sweep told an ``eta``
twice the model's (wrong acceptance ratios and proposal masses; observed
11.9 after 120,000 steps), and a stale tokens-by-word index (the word
proposal no longer what its acceptance ratio assumes: the approximation
of samplers with stale proposal tables; observed 29.7 after 30,000
steps). Kernel mutations checked by hand (at 60,000 steps) fail the
tests above too: a Hastings ratio with the topic totals of the wrong
topic (word step: largest |z| 77 with mh_steps=2, 747 with mh_steps=1,
56 AGS; document step: 315, AGS 355) and the prior's alias table
replaced by its column (190, AGS 132).

The sparse kernel (``_sparse_mh_kernel.h``, tokens taken word by word,
uniforms from the same stream) runs the same tests: largest |z| 1.24
(mh_steps=1), 1.09 (mh_steps=2), 1.28 (AGS); power: broken eta 18.4
after 40,000 steps, stale index 46.9 after 30,000. Its kernel mutations
checked by hand (at 60,000 steps, with the earlier uniform stream): the
c term of q(s) dropped from the acceptance ratio (``qs = counts[m0] *
inv[s0]``; largest |z| 1547 / 1555 / 1759) and the proposal mass of t
with half the word part (``qt = nt * inv[t] + 0.5 c``; 37 / 68 / 66, and
23 / 44 / 49 at 30,000 steps with today's stream), both also failing the
chi-square tests of ``test_mh_sampling.py``.
"""

import numpy as np
import pytest
from test_geweke import (
    CLDA_MODEL,
    CLDA_SPEC,
    LDA_MODEL,
    LDA_SPEC,
    M_PRIOR,
    _assert_geweke_detects,
    _assert_geweke_passes,
    _CLDATransition,
    _LDATransition,
    _run_geweke,
)

from sklearn_clda._mh_sweeper import _MHSweeper


class _MHMixin:
    """Swap the dense sweeper of a test_geweke transition for the MH one."""

    mh_steps = 2
    stale_index = False
    kernel = "mh"

    def _mh_start(self, state, seed_sequence, n_rows):
        self.sweeper = _MHSweeper(state, seed_sequence, n_rows, self.mh_steps,
                                  kernel=self.kernel)

    def _refresh(self):
        if not self.stale_index:
            self.sweeper.refresh_word_index()


class _LDAMH(_MHMixin, _LDATransition):
    def __init__(self, spec, model, seed, mh_steps=2, eta_used=None, stale_index=False,
                 kernel="mh"):
        super().__init__(spec, model, seed, eta_used=eta_used)
        self.mh_steps, self.stale_index, self.kernel = mh_steps, stale_index, kernel

    def start(self, state, pi0, rng):
        self._mh_start(state, np.random.SeedSequence(self.seed), 0)

    def __call__(self, state):
        self._refresh()
        super().__call__(state)


class _AGSMH(_MHMixin, _CLDATransition):
    def __init__(self, spec, model, seed, mh_steps=2, kernel="mh"):
        super().__init__(spec, model, seed, algorithm="ags")
        self.mh_steps, self.kernel = mh_steps, kernel

    def start(self, state, pi0, rng):
        super().start(state, pi0, rng)  # the pi start and the global stream
        sweep_ss, _ = np.random.SeedSequence(self.seed).spawn(2)
        self._mh_start(state, sweep_ss, self.sweeper.shards[0]["tables"].shape[0])

    def __call__(self, state):
        self._refresh()
        super().__call__(state)


# Chain steps of each test above. A wrong kernel's |z| grows as the square
# root of the steps: the mutations listed above, seen at 60,000 steps,
# show about 0.7 of it here (checked: the sparse kernel's halved word part).
PASS_STEPS = 30_000


@pytest.mark.parametrize("kernel,mh_steps", [("mh", 1), ("mh", 2), ("sparse", 1), ("sparse", 2)])
def test_geweke_lda_mh_sweep(kernel, mh_steps):
    tr = _LDAMH(LDA_SPEC, LDA_MODEL, seed=81, mh_steps=mh_steps, kernel=kernel)
    zs = _run_geweke(LDA_SPEC, LDA_MODEL, tr, T=PASS_STEPS, M=M_PRIOR, seed=80)
    _assert_geweke_passes(zs, f"LDAGibbs {kernel} sweep, mh_steps={mh_steps}")


@pytest.mark.parametrize("kernel", ["mh", "sparse"])
def test_geweke_clda_ags_mh(kernel):
    tr = _AGSMH(CLDA_SPEC, CLDA_MODEL, seed=91, kernel=kernel)
    zs = _run_geweke(CLDA_SPEC, CLDA_MODEL, tr, T=PASS_STEPS, M=M_PRIOR, seed=90)
    assert tr.sweeper.shards[0]["tables"].shape[0] == CLDA_SPEC.J  # tables drawn
    _assert_geweke_passes(zs, f"CompoundLDA AGS, {kernel} sweep")


# Chain steps of each power check: enough for the largest |z| seen (see
# above) to clear Z_POWER by 40% or more (the MH eta check needs 120,000).
POWER_STEPS = {("eta", "mh"): 120_000, ("eta", "sparse"): 40_000,
               ("stale_index", "mh"): 30_000, ("stale_index", "sparse"): 30_000}


@pytest.mark.parametrize("kernel", ["mh", "sparse"])
@pytest.mark.parametrize("broken", ["eta", "stale_index"])
def test_geweke_mh_power(broken, kernel):
    kw = (dict(eta_used=2 * LDA_MODEL.eta) if broken == "eta"
          else dict(stale_index=True))
    tr = _LDAMH(LDA_SPEC, LDA_MODEL, seed=81, kernel=kernel, **kw)
    zs = _run_geweke(LDA_SPEC, LDA_MODEL, tr, T=POWER_STEPS[broken, kernel], M=M_PRIOR, seed=80)
    _assert_geweke_detects(zs, f"{kernel} sweep with a broken {broken}")
