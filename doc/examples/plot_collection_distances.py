"""
================================
Which collections are alike
================================

With a handful of collections, :func:`~sklearn_clda.inspection.compare_collections`
says topic by topic how two of them differ. With many (outlets, years,
authors) the first question is coarser: which collections talk about the
same things, and which stand apart?

Compound LDA gives every collection a topic mixture :math:`\\pi_j`.
:func:`~sklearn_clda.inspection.collection_distances` measures how far apart
two mixtures are in every posterior draw and summarizes those distances;
:class:`~sklearn_clda.plotting.CollectionDistanceDisplay` draws them as a
matrix with alike collections side by side.

Here the collections are the bundled corpus's sixteen newsgroups. The model
is told only that a document belongs to, say, ``rec.autos``; it is not told
that ``rec.autos`` and ``rec.motorcycles`` are both ``rec.*``. Do the
distances find the newsgroups' hierarchy? And which documents read like
another newsgroup than their own?
"""

# %%
# Fit compound LDA with a collection per newsgroup
# ------------------------------------------------
import matplotlib.pyplot as plt
import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform

from sklearn_clda import CompoundLDA
from sklearn_clda.datasets import load_news16
from sklearn_clda.inspection import collection_distances
from sklearn_clda.plotting import CollectionDistanceDisplay

news = load_news16()
clda = CompoundLDA(n_components=20, eta=0.01, max_iter=200, thin=2, random_state=0)
clda.fit(news.data, groups=news.categories)
print(len(clda.groups_), "collections,", clda.collection_topic_samples_.shape[0], "kept draws")

# %%
# The distances, with their intervals
# -----------------------------------
# One row per pair of collections: the posterior mean of the Hellinger
# distance between their mixtures (0 for the same mixture, 1 for no topic
# in common), its 90% interval, and the effective sample size and R-hat of
# its draws. The closest pairs:
distances = collection_distances(clda)
print(distances.sort_values("distance").head(8).round(3).to_string(index=False))

# %%
# The matrix
# ----------
# The collections are ordered by an average-linkage clustering of the
# distances, so that groups of alike collections show as dark blocks along
# the diagonal.
display = CollectionDistanceDisplay.from_estimator(clda)
plt.show()

# %%
# The clusters against the newsgroups' names
# ------------------------------------------
# Cut the same clustering into four groups and list each group's
# newsgroups. The ``comp.*`` newsgroups come out as one group and the two
# sports as another. ``sci.crypt`` joins ``talk.politics.*``: beside its
# own encryption topic, a quarter of its text, its threads argue, and it
# shares the topics of argument and chat with the political newsgroups.
# The other ``sci.*`` newsgroups join ``rec.autos`` and
# ``rec.motorcycles``, with whom they share a topic of technical
# measurements (*level damage temperature*). The distances follow what the
# collections write about, not how they are named.
matrix = np.asarray(display.distances)
tree = linkage(squareform(matrix, checks=False), method="average")
clusters = fcluster(tree, 4, criterion="maxclust")
for cluster in np.unique(clusters):
    print(cluster, [name for name, c in zip(display.collection_labels, clusters)
                    if c == cluster])

# %%
# Each collection's closest
# -------------------------
np.fill_diagonal(matrix, np.inf)
for j, name in enumerate(display.collection_labels):
    print(f"{name:>25} -> {display.collection_labels[matrix[j].argmin()]}"
          f" ({matrix[j].min():.2f})")

# %%
# Documents that read like another collection
# --------------------------------------------
# The distances compare whole collections. Within a collection, some
# documents read like another one: :func:`~sklearn_clda.inspection.document_collections`
# gives each document's posterior over the collections, ``p(j | words)``,
# from the topics its words use and each collection's mixture. Of the
# ``sci.crypt`` posts, most read like ``sci.crypt``; those that read most
# like a political newsgroup talk of courts, broadcasters or nazis rather
# than ciphers (their most frequent words below), and one that reads like
# ``talk.politics.mideast`` is about a Christmas turkey: the topics see
# words, not their senses.
from sklearn_clda.inspection import document_collections

categories = np.asarray(news.categories)
crypt = np.flatnonzero(categories == "sci.crypt")
reads = document_collections(clda, news.data[crypt], categories[crypt], random_state=0)
print(reads["most_likely"].value_counts().head(4).to_string())
political = reads[reads["most_likely"].str.startswith("talk.politics")]
words = np.asarray(news.feature_names)
for i, row in political.nlargest(3, "probability").iterrows():
    counts = news.data[crypt[i]].toarray().ravel()
    print(f"{row.most_likely} ({row.probability:.2f}):", " ".join(words[np.argsort(-counts)[:8]]))

# %%
# How sure is that?
# -----------------
# Each distance comes with its interval: the uncertainty of both mixtures,
# draw by draw. Two cautions. A distance is never negative, so near zero
# the uncertainty of small collections adds to it: compare collections of
# similar sizes. And a 200-sweep chain keeps few effective draws of some
# mixtures: pairs whose R-hat is above 1.01 drift over the chain, and more
# sweeps, or several chains (a list of fits), make their intervals honest.
print((distances.rhat > 1.01).mean().round(2), "of the pairs have an R-hat above 1.01")
