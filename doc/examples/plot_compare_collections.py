"""
================================================
How two collections differ, with the uncertainty
================================================

Compound LDA fits one set of topics and, for every collection, a topic
mixture :math:`\\pi_j`. The sampler keeps posterior draws of the mixtures, so
the question "which topics does ``politics`` discuss more than ``sci``, and
how sure are we?" has a direct answer: for every draw, take the difference
:math:`\\pi_{\\mathrm{politics}} - \\pi_{\\mathrm{sci}}`, and summarize those
differences. This is what R's ``stm`` approximates with ``estimateEffect``
(a regression on sampled topic proportions); here it is read off the joint
posterior draws.

This example uses :mod:`sklearn_clda.inspection` on the bundled 16
Newsgroups corpus: FREX labels for the topics, each collection's shares with
posterior intervals and effective sample sizes, a map of the topics with
each collection's shares, the topics grouped into themes, the difference of two
collections, the documents behind a topic and how each collection words
it. It runs 400 Gibbs sweeps at
:math:`K = 20` to keep the documentation build short; see the last section
for what that costs in precision.
"""

# %%
# Fit compound LDA on the four collections
# ----------------------------------------
import itertools

import matplotlib.pyplot as plt

from sklearn_clda import CompoundLDA
from sklearn_clda.datasets import load_news16
from sklearn_clda.plotting import (
    CollectionDifferenceDisplay,
    CollectionWordsDisplay,
    TopicHierarchyDisplay,
    TopicMapDisplay,
)
from sklearn_clda.inspection import (
    collection_topic_summary,
    compare_collections,
    find_topics,
    representative_documents,
    topic_hierarchy,
    topic_info,
    topic_labels,
    topic_themes,
    topic_words_by_collection,
)

news = load_news16()
clda = CompoundLDA(n_components=20, eta=0.01, max_iter=400, thin=2, random_state=0)
clda.fit(news.data, groups=news.groups)
print("collections:", clda.groups_.tolist())
print("kept draws of pi:", clda.collection_topic_samples_.shape[0])

# %%
# The topics at a glance
# ----------------------
# :func:`~sklearn_clda.inspection.topic_info` puts in one table, the largest
# topic first, what the functions below say one by one: each topic's
# expected tokens and share, its FREX and most probable words, their
# coherence and exclusivity, the three documents most about it and the
# collection that surely gives it the largest share, with that share's 90%
# interval (BERTopic's ``get_topic_info``).
info = topic_info(clda, news.data, news.groups, feature_names=news.feature_names,
                  n_words=4)
print(info.drop(columns=["prob_words", "documents"]).head(8).round(3).to_string(index=False))

# %%
# Label the topics with FREX words
# --------------------------------
# The most probable words of a topic are often words every topic uses.
# FREX (stm's default label) ranks a topic's words by the harmonic mean of
# their frequency in the topic and their exclusivity to it; the probability
# words are shown beside them.
labels = topic_labels(clda, news.feature_names, method="frex", n_words=5)
names = labels["words"].str[:3].str.join(" ")
for row in labels.itertuples():
    print(f"{row.topic:>2}  FREX: {' '.join(row.words):<45} prob: {' '.join(row.prob_words)}")

# %%
# Find the topics about given words
# ---------------------------------
# :func:`~sklearn_clda.inspection.find_topics` (stm's ``findTopic``) ranks
# the topics by their probability given the words, read as a short
# document, so that a topic must use all of them to rank high.
found = find_topics(clda, ["gun", "law"], news.feature_names)
print(found.head(3).drop(columns="label_words").round(3).to_string(index=False))

# %%
# Each collection's topic shares
# ------------------------------
# :func:`~sklearn_clda.inspection.collection_topic_summary` gives, for every
# collection and topic, the posterior mean share, a 90% equal-tailed
# posterior interval and the effective sample size (ESS) of the draws.
summary = collection_topic_summary(clda, ci=0.9)
print(summary.head(6).round(3).to_string(index=False))
shares = summary.pivot(index="topic", columns="collection", values="mean")
print(shares.assign(label=names).round(3).to_string())

# %%
# The same shares on a map of the topics
# --------------------------------------
# :class:`~sklearn_clda.plotting.TopicMapDisplay` places the topics by
# their words, alike topics close (the first two principal coordinates of
# their Hellinger distances, LDAvis's intertopic distance map, also a table
# from :func:`~sklearn_clda.inspection.topic_map`), and draws the map once
# per collection: each circle's area is the collection's share of the
# topic, the dashed circle the corpus's, and the colour their ratio. Each
# collection lights up its own region. Two axes show only part of the
# distances (their share is on each axis); the tree below uses them all.
TopicMapDisplay.from_estimator(clda, feature_names=news.feature_names)
plt.show()

# %%
# Themes: topics grouped by their words
# -------------------------------------
# Twenty topics are more than a reader takes in at once, and some split one
# theme. :class:`~sklearn_clda.plotting.TopicHierarchyDisplay` draws the
# tree of :func:`~sklearn_clda.inspection.topic_hierarchy`: the topics
# joined by how alike their words are (Ward's linkage of the Hellinger
# distances), here cut into four themes, one colour each.
TopicHierarchyDisplay.from_estimator(clda, feature_names=news.feature_names, n_clusters=4)
plt.show()

# %%
# The tree as a table, each merged group labelled with its own FREX words
# (those of the topic its topics make together). Its columns ``left``,
# ``right``, ``distance`` and ``n_topics`` are SciPy's linkage matrix.
# :func:`~sklearn_clda.inspection.topic_themes` cuts it into the same four
# themes, each named by its three first words.
tree = topic_hierarchy(clda, news.feature_names)
print(tree[["node", "left", "right", "distance", "n_topics", "words"]].tail(4)
      .round(3).to_string(index=False))
themes = topic_themes(clda, 4, news.feature_names)
for name, members in themes.items():
    print(f"{name:<32} topics {members}")

# %%
# ``topic_groups`` sums the topics of each theme draw by draw, so that every
# theme's share in every collection gets its own posterior interval (that
# of the sum: the topics of a theme trade shares, and the sum of their
# intervals would overstate it):
by_theme = collection_topic_summary(clda, topic_groups=themes)
print(by_theme.pivot(index="topic", columns="collection", values="mean").round(3)
      .to_string())
print(by_theme[by_theme["collection"] == "sci"].round(3).to_string(index=False))

# %%
# The displays take the same groups: here how politics and sci differ,
# theme by theme.
CollectionDifferenceDisplay.from_estimator(clda, "politics", "sci", topic_groups=themes)
plt.show()

# %%
# politics against sci
# --------------------
# :func:`~sklearn_clda.inspection.compare_collections` summarizes the draws
# of :math:`\pi_{\mathrm{politics},k} - \pi_{\mathrm{sci},k}` for every topic:
# their mean, a 90% interval and the posterior probability that politics
# gives the topic the larger share.
diff = compare_collections(clda, "politics", "sci", ci=0.9)
diff["label"] = names
print(diff.sort_values("mean").round(3).to_string(index=False))

# %%
# The same numbers as a plot, in the style of stm's
# ``plot.estimateEffect(method="difference")``:
# :class:`~sklearn_clda.plotting.CollectionDifferenceDisplay` draws one row
# per topic, the posterior mean of the difference and its 90% interval,
# the topics whose interval leaves out zero in color. Without ``b`` it
# compares a collection with the rest of the corpus.
CollectionDifferenceDisplay.from_estimator(
    clda, "politics", "sci", feature_names=news.feature_names
)
plt.show()

# %%
# Why the joint draws matter
# --------------------------
# Comparing two separate intervals is not the same test. The draws of the
# two mixtures are correlated, because both depend on the same topic
# assignments, so the separate intervals can overlap while every draw of the
# difference has the same sign. Count such topics over all pairs of
# collections:
for a, b in itertools.combinations(clda.groups_, 2):
    d = compare_collections(clda, a, b)
    sa = summary[summary["collection"] == a].reset_index(drop=True)
    sb = summary[summary["collection"] == b].reset_index(drop=True)
    overlap = (sa["lower"] <= sb["upper"]) & (sb["lower"] <= sa["upper"])
    clear = (d["lower"] > 0) | (d["upper"] < 0)
    print(f"{a:>8} vs {b:<8}: {int(clear.sum()):>2} topics whose difference "
          f"interval excludes 0, {int((overlap & clear).sum())} of them with "
          "overlapping separate intervals")

# %%
# The documents behind a topic, within each collection
# ----------------------------------------------------
# :func:`~sklearn_clda.inspection.representative_documents` returns the
# documents with the largest share of a topic (stm's ``findThoughts``), here
# within one collection at a time. The corpus is bag-of-words only, so we
# print each document's original newsgroup.
topic = int(diff["mean"].abs().idxmax())
print(f"topic {topic}: {names[topic]}")
for collection in ("politics", "sci"):
    docs = representative_documents(
        clda, news.data, news.groups, n=3, topic=topic, collection=collection
    )
    groups = news.categories[docs["document"]].tolist()
    print(f"  {collection:<9}", list(zip(docs["document"].tolist(),
                                         docs["theta"].round(2).tolist(), groups)))

# %%
# How each collection words the same topic
# ----------------------------------------
# The topics are shared, but a collection may use its own words within one.
# :func:`~sklearn_clda.inspection.topic_words_by_collection` attributes every
# token to the topics and ranks, for each collection, the words it uses in a
# topic more often than the other collections do (z-scores of log-odds,
# Monroe et al. 2008; above about 2 is more than chance). Here the topic
# whose share differs most between the collections, and the one they share
# most evenly:
evenness = shares.min(axis=1) / shares.max(axis=1)
for k in (topic, int(evenness.idxmax())):
    words = topic_words_by_collection(
        clda, news.data, news.groups, topic=k, n_words=5, feature_names=news.feature_names
    )
    print(f"topic {k}: {names[k]}")
    for collection, rows in words.groupby("collection"):
        listed = ", ".join(f"{w} ({z:.1f})" for w, z in zip(rows["word"], rows["z"]))
        print(f"  {collection:<9} {rows['collection_tokens'].iloc[0]:>7.0f} tokens: {listed}")

# %%
# The same for the evenly shared topic, as a figure: one panel per
# collection, the dotted line at a z-score of 2.
CollectionWordsDisplay.from_estimator(
    clda, news.data, news.groups, int(evenness.idxmax()), feature_names=news.feature_names,
    n_words=8,
)
plt.show()

# %%
# How many draws the intervals rest on
# ------------------------------------
# The ESS counts the independent draws the autocorrelated chain is worth.
# The collection mixtures move slowly with the topic assignments, so this
# short run's 100 kept draws are worth far fewer:
print(summary["ess"].describe()[["min", "50%", "max"]].round(1).to_string())
print("topics whose politics - sci difference has ESS < 100:",
      int((diff["ess"] < 100).sum()), "of", len(diff))

# %%
# The ends of a 90% interval are estimated much less precisely than the mean
# with only tens of effective draws; read such intervals, and a
# ``prob_greater`` of 0 or 1, as provisional. On this corpus a longer chain
# does not cure it: some shares drift over thousands of sweeps, which the
# R-hat of the chain's two halves (the ``rhat`` column) shows. Fit the model
# with a few seeds and pass the list of fits to the same functions
# (:func:`~sklearn_clda.inspection.align_chains`): the pooled intervals then
# carry the uncertainty one chain cannot see. See the user guide's section
# on several chains for what that changes on this corpus. To check whether
# a difference is more than the model would make of any labels, whatever
# its chain, :func:`~sklearn_clda.inspection.permutation_test` refits the
# model with the labels of the two collections shuffled (19 refits, about
# three minutes here on two cores, so not run in this example); on this
# fit it confirms 14 of the 16 politics - sci differences whose interval
# leaves out zero, and not the two smallest (see the user guide).
print("shares with a split R-hat above 1.01:", int((summary["rhat"] > 1.01).sum()),
      "of", len(summary))
