"""
======================================================
Is the chain mixing? Traces and autocorrelations of pi
======================================================

:class:`~sklearn_clda.CompoundLDA` samples the collection mixtures
:math:`\\pi_j` every sweep and keeps the draws after burn-in in
``collection_topic_samples_``. Their trace plots show whether the chain has
settled, and their autocorrelations how many sweeps apart two draws must be
to carry independent information: the paper uses both to compare its two
samplers, AGS (auxiliary variables, the default) and MGS (Riemann-manifold
Langevin proposals).

To keep the documentation build fast this example uses 3,000 of the 10,764
16 Newsgroups posts, :math:`K = 10` and 300 sweeps per chain. Real analyses
use more sweeps.
"""

# %%
# Fit with every draw kept
# ------------------------
# ``burn_in=0`` and ``thin=1`` keep every sweep's draw, so the trace also
# shows the chain leaving its starting point (the uniform mixture).
# ``evaluate_every`` records the joint log-likelihood in ``trace_``.
import matplotlib.pyplot as plt
import numpy as np

from sklearn_clda import CompoundLDA
from sklearn_clda.datasets import load_news16
from sklearn_clda.plotting import (
    PiTraceDisplay,
    TraceDisplay,
    autocorrelation,
)

news = load_news16()
rng = np.random.default_rng(0)
subset = np.sort(rng.choice(news.data.shape[0], size=3000, replace=False))
X, groups = news.data[subset], news.groups[subset]

common = dict(
    n_components=10, eta=0.01, max_iter=300, burn_in=0, thin=1,
    evaluate_every=10, random_state=0,
)
ags = CompoundLDA(algorithm="ags", **common).fit(X, groups=groups)
print(ags.collection_topic_samples_.shape)  # (draws, collections, topics)

# %%
# Trace plots
# -----------
# One panel per collection and one line per topic (by default the five topics
# whose shares differ most between collections). The proportions leave the
# uniform start within a few dozen sweeps, then keep drifting slowly while
# the topics themselves take shape, and fluctuate around stable values from
# about sweep 150 on. The draws before that point are what ``burn_in``
# discards (by default the first half of the sweeps).
PiTraceDisplay.from_estimator(ags)
plt.show()

# %%
# The joint log-likelihood tells the same story for the whole model:
# :class:`~sklearn_clda.plotting.TraceDisplay` plots ``trace_``.
TraceDisplay.from_estimator(ags)
plt.show()

# %%
# Autocorrelation after burn-in
# -----------------------------
# The autocorrelation must be computed on the settled part of the chain only.
# The display can be built from any array of draws; here the draws after
# sweep 150. (A model fitted with the default ``burn_in=max_iter // 2`` gives
# ``PiTraceDisplay.from_estimator(model, kind="acf")`` directly.)
settled = ags.collection_topic_samples_[150:]
pi_mean = settled.mean(axis=0)
spread = pi_mean.max(axis=0) - pi_mean.min(axis=0)
topics = np.argsort(-spread)[:5]  # as from_estimator chooses them
PiTraceDisplay(
    settled[:, :, topics], topics=topics, collection_labels=ags.groups_,
    kind="acf", max_lag=40,
).plot()
plt.show()

# %%
# AGS against MGS
# ---------------
# The same fit with ``algorithm="mgs"``: each sweep makes one Metropolis
# proposal per collection, with its step size tuned during burn-in
# (``adapt_step_size``). Both chains target the same posterior, but MGS moves
# in smaller steps. We compare the mean autocorrelation over the collections
# and each chain's five most contrasted topics (topic numbers differ between
# two fits), after sweep 150 for both: MGS is fitted with ``burn_in=150`` so
# that its step is tuned first.
mgs = CompoundLDA(algorithm="mgs", **{**common, "burn_in": 150}).fit(
    X, groups=groups
)
print(f"MGS acceptance rate: {mgs.acceptance_rate_:.2f}")



def top_spread_topics(draws, n=5):
    """The n topics whose mean shares differ most between collections."""
    mean = draws.mean(axis=0)
    return np.argsort(-(mean.max(axis=0) - mean.min(axis=0)))[:n]


max_lag = 40
fig, ax = plt.subplots(figsize=(6.4, 4.0))
chains = [("AGS", settled), ("MGS", mgs.collection_topic_samples_)]
for name, draws in chains:
    shown = top_spread_topics(draws)
    acf = autocorrelation(draws[:, :, shown], max_lag=max_lag)
    ax.plot(np.arange(acf.shape[0]), acf.mean(axis=(1, 2)), marker="o",
            markersize=3, label=name)
ax.axhline(0.0, color="0.5", linewidth=0.8)
ax.set_xlabel("Lag (sweeps)")
ax.set_ylabel("Mean autocorrelation of pi")
ax.set_title("Mixing of the collection mixtures")
ax.legend()
plt.show()

# %%
# AGS decorrelates faster over the first few sweeps: its exact Gibbs draw of
# :math:`\pi_j` moves further than one Langevin step. At longer lags both
# curves are dominated by the slow movement of the topic assignments, which
# the two samplers share, so the remaining autocorrelation is a property of
# the model and the corpus rather than of the :math:`\pi` update. The faster
# the autocorrelation decays, the fewer sweeps a given precision of the
# posterior means needs, which is why AGS is the default. With a slowly
# mixing chain, increase ``max_iter`` (and ``thin``, to keep the number of
# stored draws bounded) rather than trusting a short run.
