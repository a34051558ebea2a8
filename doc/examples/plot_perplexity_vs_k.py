"""
=====================================================
Held-out perplexity against the number of topics
=====================================================

Do the collections help predict unseen text? Following the paper's
evaluation (its Figure 4), this example compares three models on held-out
words of 16 Newsgroups posts, for several numbers of topics :math:`K`:

* LDA fitted by collapsed Gibbs sampling (:class:`~sklearn_clda.LDAGibbs`);
* compound LDA with a single collection (:class:`~sklearn_clda.CompoundLDA`
  without ``groups``), where :math:`\\pi` acts as a learned, shared
  asymmetric prior on the documents' topic proportions;
* compound LDA with the four collections.

The protocol is *document completion*
(:func:`~sklearn_clda.metrics.doc_completion_split`): 20% of the documents
are held out and half of each held-out document's words are given to the
model; the perplexity of the other half is what we measure (lower is
better).

To keep the documentation build fast the example uses 4,000 of the 10,764
posts, three values of :math:`K` and 150 sweeps per fit (about half a minute
in all). The paper uses the whole corpus and 1000 sweeps; with those, the
gap between the models is larger and the curves are smoother.
"""

# %%
# A document-completion split
# ---------------------------
import matplotlib.pyplot as plt
import numpy as np

from sklearn_clda import CompoundLDA, LDAGibbs
from sklearn_clda.datasets import load_news16
from sklearn_clda.metrics import (
    doc_completion_split,
    perplexity_from_estimates,
)
from sklearn_clda.plotting import PerplexityDisplay

news = load_news16()
rng = np.random.default_rng(0)
subset = np.sort(rng.choice(news.data.shape[0], size=4000, replace=False))
X, groups = news.data[subset], news.groups[subset]

split = doc_completion_split(X, groups, test_size=0.2, random_state=0)
print("training matrix:", split.X_train.shape, "held-out documents:",
      split.X_test.shape[0])
print("training tokens:", int(split.X_train.sum()),
      "test tokens:", int(split.X_test.sum()))

# %%
# ``split.X_train`` holds the training documents followed by the *observed*
# halves of the held-out documents (rows ``split.heldout_rows``), and
# ``split.groups_train`` their collections. As in the paper, every model is
# fitted on it, and the perplexity of the test halves uses the sampler's own
# estimates of those documents' topic proportions (``doc_topic_``).
#
# The priors are matched: LDA's ``doc_topic_prior=0.1`` puts a prior mass of
# ``0.1 * K`` on each document, the same as compound LDA's default
# ``gamma = 0.1 * K``; every model uses the topic-word prior ``0.01``.
n_topics = [10, 20, 30]
sweeps = dict(max_iter=150, thin=5, random_state=0)
models = {
    "LDA (Gibbs)": lambda k: LDAGibbs(
        k, doc_topic_prior=0.1, topic_word_prior=0.01, **sweeps
    ),
    "cLDA, 1 collection": lambda k: CompoundLDA(k, eta=0.01, **sweeps),
    "cLDA, 4 collections": lambda k: CompoundLDA(k, eta=0.01, **sweeps),
}

results = {name: [] for name in models}
for k in n_topics:
    for name, make_model in models.items():
        model = make_model(k)
        if name == "cLDA, 4 collections":
            model.fit(split.X_train, groups=split.groups_train)
        else:
            model.fit(split.X_train)
        theta = model.doc_topic_[split.heldout_rows]
        value = perplexity_from_estimates(
            theta, model.components_, split.X_test
        )
        results[name].append(value)
        print(f"K={k:>2}  {name:<20} perplexity {value:7.1f}")

# %%
# Plot the curves
# ---------------
# :class:`~sklearn_clda.plotting.PerplexityDisplay` draws one line per
# model. Passing runs with several seeds, as an array of shape
# ``(n_points, n_runs)`` per model, would add a band of one standard
# deviation.
disp = PerplexityDisplay.from_results(n_topics, results)
disp.ax_.set_title("16 Newsgroups subset: held-out perplexity")
plt.show()

# %%
# In this reduced setting the curves are close at small :math:`K`, where the
# differences are no larger than the run-to-run noise (a percent or two from
# one seed to the next). As :math:`K` grows, compound LDA predicts the
# held-out words better than LDA, as in the paper: a learned asymmetric prior
# (one collection) already helps, and per-collection priors help more.
# Averaging over several seeds, more sweeps and the full corpus sharpen the
# comparison; ``benchmarks/bench_clda.py`` in the repository runs it at the
# paper's scale (see :ref:`benchmarks`).

# %%
# The estimators' own score
# -------------------------
# Every estimator also has ``score`` and ``perplexity`` methods that need no
# split: each document's words are dealt alternately into two halves, and
# each half is scored under the topic proportions inferred from the other
# with the topics held fixed. This is what
# :class:`~sklearn.model_selection.GridSearchCV` uses to choose :math:`K`
# (see :ref:`choosing_k`). For compound LDA, pass the documents' collections.
heldout = split.heldout_index
clda = CompoundLDA(20, eta=0.01, **sweeps).fit(
    X[split.train_index], groups=groups[split.train_index]
)
X_heldout, groups_heldout = X[heldout], groups[heldout]
score = clda.score(X_heldout, groups=groups_heldout)
print(f"score: {score:.1f} nats")
print(f"perplexity: {clda.perplexity(X_heldout, groups=groups_heldout):.1f}")
