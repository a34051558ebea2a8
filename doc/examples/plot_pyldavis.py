"""
========================================
Exploring LDAGibbs topics with pyLDAvis
========================================

`pyLDAvis <https://github.com/bmabey/pyLDAvis>`_ draws an interactive map
of a topic model: the topics as circles placed by how much their word
distributions differ, and for the selected topic its most *relevant* words
(Sievert and Shirley, 2014). Its ``pyLDAvis.lda_model.prepare`` was written
for scikit-learn's ``LatentDirichletAllocation`` and reads only
``components_`` and ``transform``, which :class:`~sklearn_clda.LDAGibbs`
provides with the same meaning, so it works unchanged
(``pip install pyLDAvis``).

This example fits :math:`K = 10` topics to 2,000 of the bundled 16
Newsgroups posts with 300 sweeps, to keep the documentation build fast,
draws pyLDAvis's two views with matplotlib from the data it prepares, and
saves the interactive page as an HTML file that also opens offline.
"""

# %%
# Texts and counts
# ----------------
# pyLDAvis needs the vectorizer for the vocabulary and the document-term
# matrix as a SciPy sparse *matrix*, which
# :class:`~sklearn.feature_extraction.text.CountVectorizer` returns. The
# bundled corpus is stored as word counts; the texts are rebuilt from them
# (each document's words repeated by their counts) so that the example
# starts, like your own analysis would, from strings.
import matplotlib.pyplot as plt
import numpy as np
import pyLDAvis
import pyLDAvis.lda_model
from sklearn.feature_extraction.text import CountVectorizer

from sklearn_clda import LDAGibbs
from sklearn_clda.datasets import load_news16

news = load_news16()
texts = [
    " ".join(np.repeat(news.feature_names[row.indices], row.data))
    for row in news.data[:2000]
]
vectorizer = CountVectorizer(min_df=5)
dtm = vectorizer.fit_transform(texts)
print(dtm.shape)

# %%
# Fit the model
# -------------
lda = LDAGibbs(n_components=10, max_iter=300, random_state=0).fit(dtm)

# %%
# Prepare the visualization
# -------------------------
# ``sort_topics=False`` and ``start_index=0`` keep the model's topic
# numbers (by default pyLDAvis renumbers the topics by size, from 1), and
# ``n_jobs=1`` computes in this process rather than starting one per core.
vis = pyLDAvis.lda_model.prepare(
    lda, dtm, vectorizer, sort_topics=False, start_index=0, n_jobs=1
)

# %%
# The intertopic distance map
# ---------------------------
# ``vis.topic_coordinates`` places each topic by classical multidimensional
# scaling of the Jensen-Shannon divergences between the topics' word
# distributions; ``Freq`` is the topic's share of the corpus's tokens, in
# percent. Topics close together share words.
coords = vis.topic_coordinates
fig, ax = plt.subplots(figsize=(6, 6))
ax.scatter(coords["x"], coords["y"], s=coords["Freq"] * 150, alpha=0.4)
for topic, row in coords.iterrows():
    ax.annotate(str(topic), (row["x"], row["y"]), ha="center", va="center")
ax.set(xlabel="PC1", ylabel="PC2", title="Intertopic distance map")
ax.set_aspect("equal", adjustable="datalim")
ax.margins(0.15)
plt.show()

# %%
# The most relevant words of a topic
# ----------------------------------
# The relevance of word :math:`w` to topic :math:`k` weighs its probability
# in the topic against its lift (that probability over the word's overall
# frequency): :math:`\lambda \log \phi_{kw} + (1 - \lambda) \log
# (\phi_{kw} / p_w)`. :math:`\lambda = 1` ranks by probability alone and
# favours frequent words; Sievert and Shirley found :math:`\lambda = 0.6`
# best for interpretation. ``vis.topic_info`` holds, for every topic, the
# candidate words with both logarithms. Here: the topic in which the word
# "space" is most probable.
topic = int(np.argmax(lda.components_[:, vectorizer.vocabulary_["space"]]))
lam = 0.6
info = vis.topic_info[vis.topic_info["Category"] == f"Topic{topic}"]
relevance = lam * info["logprob"] + (1 - lam) * info["loglift"]
top = info.assign(relevance=relevance).nlargest(10, "relevance")

fig, ax = plt.subplots(figsize=(6, 4))
ax.barh(top["Term"][::-1], top["Total"][::-1], color="lightgray", label="whole corpus")
ax.barh(top["Term"][::-1], top["Freq"][::-1], color="tab:red", label=f"topic {topic}")
ax.set(xlabel="tokens", title=f"Topic {topic}: most relevant words (lambda = {lam})")
ax.legend(loc="lower right")
plt.tight_layout()
plt.show()

# %%
# Save the interactive page
# -------------------------
# ``pyLDAvis.save_html`` writes one HTML page. By default the page loads
# D3 and pyLDAvis's script from the web; copying the files that come with
# pyLDAvis next to the page, and pointing the page at them, makes it work
# offline. (In a notebook, ``pyLDAvis.display(vis)`` shows it inline.) A
# temporary folder stands in for yours here.
import shutil
import tempfile
from pathlib import Path

scripts = {
    "d3_url": pyLDAvis.urls.D3_LOCAL,
    "ldavis_url": pyLDAvis.urls.LDAVIS_LOCAL,
    "ldavis_css_url": pyLDAvis.urls.LDAVIS_CSS_LOCAL,
}
with tempfile.TemporaryDirectory() as folder:
    out = Path(folder)
    for path in scripts.values():
        shutil.copy(path, out)
    with open(out / "topics.html", "w", encoding="utf-8") as page:
        pyLDAvis.save_html(vis, page, **{k: Path(p).name for k, p in scripts.items()})
    print(sorted(p.name for p in out.iterdir()))
