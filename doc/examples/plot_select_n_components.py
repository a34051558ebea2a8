"""
==============================
Choosing the number of topics
==============================

There is no single right number of topics :math:`K`. R's ``stm`` offers
``searchK``, which fits the model at several :math:`K` and puts the usual
evidence side by side; :func:`~sklearn_clda.inspection.select_n_components`
does the same for compound LDA (or any topic model with a ``perplexity``
method):

- **held-out perplexity** of documents not used in the fit (lower is
  better): how well the topics predict new text;
- **coherence** (UMass, Mimno et al. 2011) of each topic's top words on the
  training documents (higher is better): do the top words occur together?
- **exclusivity** (stm's): are a topic's top words rare in the other topics?
- **stability** (Greene et al. 2014): do the fits on different folds find the
  same top words? Each fold's topics are matched with the other folds' and
  their ranked top 10 words compared (average Jaccard similarity; 1 means
  the same words in the same order);
- **residual dispersion** (Taddy 2012; stm's ``checkResiduals``): do the
  documents vary more than the topics explain? About 1 when they do not,
  higher with too few topics;
- **fit time**.

Coherence usually falls and exclusivity rises as :math:`K` grows, so no
measure decides alone: look for where perplexity stops improving much and
the two are balanced, where stability has not dropped and the dispersion
has stopped falling, then read the topics.

To keep the documentation build short, this example uses 3,000 documents of
the 16 Newsgroups corpus, 200 Gibbs sweeps per fit and 3 folds.
"""

# %%
# A subset of the corpus
# ----------------------
import matplotlib.pyplot as plt
import numpy as np

from sklearn_clda import CompoundLDA
from sklearn_clda.datasets import load_news16
from sklearn_clda.inspection import select_n_components, topic_labels
from sklearn_clda.plotting import SelectNComponentsDisplay, TopicQualityDisplay

news = load_news16()
rng = np.random.default_rng(0)
rows = np.sort(rng.choice(news.data.shape[0], size=3000, replace=False))
X, groups = news.data[rows], news.groups[rows]
print(X.shape, int(X.sum()), "tokens")

# %%
# Fit every number of topics on every fold
# ----------------------------------------
# With an int ``cv``, the folds are stratified by collection, so every
# collection has documents in every training fold; each fold's held-out
# documents are scored with their collection's mixture. Every ``K`` uses the
# same folds.
model = CompoundLDA(eta=0.01, max_iter=200, random_state=0)
results = select_n_components(
    model, X, groups, n_components=[5, 10, 20, 40], cv=3, random_state=0
)
print(results.round(2).to_string(index=False))

# %%
# One figure of the six measures
# ------------------------------
# The bands span one standard deviation over the folds.
display = SelectNComponentsDisplay.from_results(results)
plt.show()

# %%
# Read the topics of a candidate
# ------------------------------
# Numbers only shortlist candidates; the topics decide. Refit the chosen
# ``K`` on all the documents and look at its FREX labels.
best = CompoundLDA(n_components=20, eta=0.01, max_iter=200, random_state=0)
best.fit(X, groups=groups)
labels = topic_labels(best, news.feature_names, n_words=6)
for row in labels.itertuples():
    print(f"{row.topic:>2}: {' '.join(row.words)}")

# %%
# Which topics are weak
# ---------------------
# Each topic's coherence against its exclusivity (stm's ``topicQuality``),
# its area its share of the corpus: a topic far to the left mixes words
# that seldom meet in a document, one far down shares its words with the
# other topics.
TopicQualityDisplay.from_estimator(best, X, feature_names=news.feature_names)
plt.show()
