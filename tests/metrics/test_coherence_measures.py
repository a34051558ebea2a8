"""Coherence measures beyond UMass: NPMI, C_V and gensim's mean UMass.

Three kinds of checks:

- against a plain-Python reference written from the definitions (every
  document or sliding window as a set of words), on documents and on
  windows, including words that repeat inside a window;
- against gensim's ``CoherenceModel`` (``"u_mass"``, ``"c_npmi"``,
  ``"c_v"``) on identical inputs: the same top words in the same order,
  a dictionary holding every feature, and the same co-occurrence unit;
- the documented cases where we differ from gensim on purpose.
"""

import math
import warnings

import numpy as np
import pytest

from sklearn_clda.datasets import make_lda_corpus
from sklearn_clda.metrics import _coherence, top_word_indices, topic_coherence

EPS = 1e-12  # gensim's epsilon, on probabilities


# ------------------------------------------------------------ reference


def _windows(texts, window_size):
    """Every window of every text as a set of feature indices (gensim's rule:
    a text no longer than the window, even an empty one, is one window)."""
    for text in texts:
        text = [t for t in text]
        if len(text) <= window_size:
            yield {t for t in text if t >= 0}
        else:
            for s in range(len(text) - window_size + 1):
                yield {t for t in text[s : s + window_size] if t >= 0}


def _doc_sets(X):
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
    return [set(np.flatnonzero(row).tolist()) for row in X]


def _reference_npmi(sets, u, v):
    n = len(sets)
    n_u = sum(u in s for s in sets)
    n_v = sum(v in s for s in sets)
    n_uv = sum(u in s and v in s for s in sets)
    if n_u == 0 or n_v == 0:
        return 0.0
    if n_uv == n:
        return 1.0
    joint = n_uv / n + EPS
    return math.log(joint / (n_u / n * n_v / n)) / -math.log(joint)


def _reference(sets, top, measure):
    out = []
    for words in top.tolist():
        m = len(words)
        if measure == "npmi":
            vals = [_reference_npmi(sets, words[i], words[j])
                    for i in range(m) for j in range(i + 1, m)]
            out.append(sum(vals) / len(vals))
        elif measure == "c_v":
            vec = [[_reference_npmi(sets, a, b) for b in words] for a in words]
            total = [sum(vec[i][l] for i in range(m)) for l in range(m)]
            norm_total = math.sqrt(sum(t * t for t in total))
            cos = []
            for i in range(m):
                norm_i = math.sqrt(sum(x * x for x in vec[i]))
                dot = sum(vec[i][l] * total[l] for l in range(m))
                cos.append(dot / (norm_i * norm_total) if norm_i * norm_total else 0.0)
            out.append(sum(cos) / m)
        else:  # umass_mean
            n = len(sets)
            vals = []
            for i in range(1, m):
                for j in range(i):
                    n_j = sum(words[j] in s for s in sets)
                    n_ij = sum(words[i] in s and words[j] in s for s in sets)
                    vals.append(math.log((n_ij + EPS * n) / n_j) if n_j else 0.0)
            out.append(sum(vals) / len(vals))
    return np.array(out)


# --------------------------------------------------------------- corpora


@pytest.fixture(scope="module")
def corpus():
    """Counts, shuffled texts of the same counts (so words repeat inside
    windows) and topics whose top words all occur."""
    data = make_lda_corpus(
        n_topics=4, n_features=40, n_samples=60, doc_length=(15, 40),
        doc_topic_prior=0.1, topic_word_prior=0.05, random_state=0,
    )
    rng = np.random.default_rng(0)
    X = data.data
    texts = []
    for d in range(X.shape[0]):
        tokens = np.repeat(X[d].indices, X[d].data)
        rng.shuffle(tokens)
        texts.append(tokens.tolist())
    seen = np.asarray((X > 0).sum(axis=0)).ravel() > 0
    return X, texts, (data.beta + 0.01) * seen  # top words all occur


def _distinct_token_texts(n_texts, n_features, lengths, beta, seed):
    """Texts without a repeated token, each drawn from one topic's words.

    gensim's sliding window (``WordOccurrenceAccumulator._slide_window``)
    updates the words present incrementally and clears a word when one of
    its copies leaves the window, even if another copy is still inside: it
    undercounts words that repeat within a window. Texts of distinct
    tokens are counted alike by gensim and by the definition.
    """
    rng = np.random.default_rng(seed)
    texts = []
    for _ in range(n_texts):
        p = beta[rng.integers(len(beta))] * 0.9 + 0.1 / n_features
        n = int(rng.integers(*lengths))
        texts.append(rng.choice(n_features, size=n, replace=False, p=p / p.sum()))
    return texts


# ------------------------------------------------------------ reference checks


@pytest.mark.parametrize("measure", ["umass_mean", "npmi", "c_v"])
@pytest.mark.parametrize("m", [2, 7])
def test_documents_match_reference(corpus, measure, m):
    X, _, comps = corpus
    top = top_word_indices(comps, m)
    ours = topic_coherence(X, comps, m, measure=measure)
    assert np.allclose(ours, _reference(_doc_sets(X), top, measure), rtol=1e-12,
                       atol=1e-12)


@pytest.mark.parametrize("measure", ["umass_mean", "npmi", "c_v"])
@pytest.mark.parametrize("window_size", [1, 3, 10, 25, 1000])
def test_windows_match_reference(corpus, measure, window_size):
    # Shuffled texts: top words repeat inside windows; texts both shorter
    # and longer than the window.
    _, texts, comps = corpus
    top = top_word_indices(comps, 6)
    ours = topic_coherence(texts, comps, 6, measure=measure, window_size=window_size)
    expected = _reference(list(_windows(texts, window_size)), top, measure)
    assert np.allclose(ours, expected, rtol=1e-12, atol=1e-12)


def test_window_longer_than_texts_is_document_cooccurrence(corpus):
    X, texts, comps = corpus
    for measure in ("umass", "npmi", "c_v"):
        assert np.allclose(
            topic_coherence(texts, comps, 8, measure=measure, window_size=10**6),
            topic_coherence(X, comps, 8, measure=measure), rtol=1e-13,
        )


def test_blocks_of_windows_on_long_texts(monkeypatch):
    # Long texts are processed in blocks of windows; tiny blocks must give
    # the counts of one block (the definition).
    rng = np.random.default_rng(1)
    texts = [rng.integers(0, 12, size=n).tolist() for n in (0, 3, 57, 200)]
    comps = rng.random((3, 12))
    top = top_word_indices(comps, 5)
    expected = _reference(list(_windows(texts, 7)), top, "npmi")
    for cells in (1, 200, 1000, 1 << 22):  # steps of 1, 9, 76 and all windows
        monkeypatch.setattr(_coherence, "_BLOCK_CELLS", cells)
        ours = topic_coherence(texts, comps, 5, measure="npmi", window_size=7)
        assert np.allclose(ours, expected, rtol=1e-12, atol=1e-12), cells


def test_small_window_example_by_hand():
    # Text "a b a c d a", window 3: windows aba, bac, acd, cda. "a" is in
    # all 4 (gensim's incremental window counts 2), "b" in 2, both in 2.
    texts = [[0, 1, 0, 2, 3, 0]]
    comps = np.array([[0.5, 0.4, 0.05, 0.05]])
    value = topic_coherence(texts, comps, 2, measure="umass_mean", window_size=3)
    # Pair (b | a): log((2/4 + eps) / (4/4)).
    assert value == pytest.approx([math.log(0.5 + EPS)], rel=1e-12)
    npmi = topic_coherence(texts, comps, 2, measure="npmi", window_size=3)
    # log(P(a,b) / (P(a) P(b))) = log(0.5 / 0.5) = 0.
    assert npmi == pytest.approx([math.log((0.5 + EPS) / 0.5) / -math.log(0.5 + EPS)])


def test_string_tokens_and_unknown_tokens_keep_their_place():
    names = np.array(["apple", "banana", "cherry"])
    texts = [["apple", "zzz", "banana"], ["banana", "cherry"]]
    ids = [[0, -1, 1], [1, 2]]
    comps = np.array([[0.5, 0.3, 0.2], [0.1, 0.3, 0.6]])
    ours = topic_coherence(texts, comps, 3, measure="npmi", window_size=2,
                           feature_names=names)
    # "zzz" separates apple from banana: windows {a}, {b}, {b, c}.
    expected = _reference(list(_windows(ids, 2)), top_word_indices(comps, 3), "npmi")
    assert np.allclose(ours, expected, rtol=1e-12)
    assert _reference_npmi(list(_windows(ids, 2)), 0, 1) < -0.9  # never together


def test_umass_mean_is_umass_over_the_number_of_pairs(corpus):
    X, _, comps = corpus
    for m in (2, 5, 9):
        for s in (1.0, 1e-3):
            total = topic_coherence(X, comps, m, measure="umass", smoothing=s)
            mean = topic_coherence(X, comps, m, measure="umass_mean", smoothing=s)
            assert np.allclose(mean, total / (m * (m - 1) / 2), rtol=1e-13)


def test_default_smoothing_per_measure(corpus):
    X, _, comps = corpus
    n_docs = X.shape[0]
    assert np.array_equal(
        topic_coherence(X, comps, 5),
        topic_coherence(X, comps, 5, measure="umass", smoothing=1.0),
    )
    for measure in ("umass_mean", "npmi", "c_v"):
        assert np.array_equal(
            topic_coherence(X, comps, 5, measure=measure),
            topic_coherence(X, comps, 5, measure=measure, smoothing=EPS * n_docs),
        )


# ----------------------------------------------------------- against gensim


def _gensim(**kwargs):
    pytest.importorskip("gensim")
    from gensim.models.coherencemodel import CoherenceModel

    cm = CoherenceModel(processes=1, **kwargs)
    return np.array(cm.get_coherence_per_topic())


def _gensim_inputs(n_features):
    pytest.importorskip("gensim")
    from gensim.corpora import Dictionary

    names = np.array([f"w{i}" for i in range(n_features)])
    return names, Dictionary([names.tolist()])  # every feature, in id order


# Tolerance: both sides compute the same float64 formulas from the same
# integer counts, in different orders; 1e-10 absolute leaves room for
# rounding only (a changed epsilon, log base, pair set or window count
# moves values by more than 1e-6).
GENSIM_ATOL = 1e-10


@pytest.mark.parametrize(
    "measure, gensim_name", [("npmi", "c_npmi"), ("c_v", "c_v")]
)
@pytest.mark.parametrize("m", [10, 15])  # both with pairs that never meet
def test_gensim_documents(corpus, measure, gensim_name, m):
    """Document co-occurrence: gensim's sliding window with a window longer
    than every text makes each text one window, which is a document. (Its
    first window of a text is counted correctly even with repeats.) The
    top words are ours, passed to gensim in the same order."""
    X, texts, comps = corpus
    names, dictionary = _gensim_inputs(X.shape[1])
    # Top words of two topics, so that some pairs never share a document.
    comps = comps + 0.8 * np.roll(comps, 1, axis=0)
    top = top_word_indices(comps, m)
    longest = max(len(t) for t in texts)
    expected = _gensim(
        topics=names[top].tolist(), texts=[names[t].tolist() for t in texts],
        dictionary=dictionary, coherence=gensim_name, topn=m,
        window_size=longest + 1,
    )
    ours = topic_coherence(X, comps, m, measure=measure)
    assert np.allclose(ours, expected, rtol=0, atol=GENSIM_ATOL)


def test_gensim_u_mass_is_umass_mean(corpus):
    """gensim's u_mass: boolean documents of a bag-of-words corpus built
    from the same counts, one-pre pairs, epsilon 1e-12, mean over pairs."""
    X, texts, comps = corpus
    names, dictionary = _gensim_inputs(X.shape[1])
    bow = [dictionary.doc2bow(names[t].tolist()) for t in texts]
    for m in (2, 10):
        top = top_word_indices(comps, m)
        expected = _gensim(topics=names[top].tolist(), corpus=bow,
                           dictionary=dictionary, coherence="u_mass", topn=m)
        ours = topic_coherence(X, comps, m, measure="umass_mean")
        assert np.allclose(ours, expected, rtol=0, atol=GENSIM_ATOL)


@pytest.mark.parametrize(
    "measure, gensim_name, window_size",
    [("npmi", "c_npmi", 10), ("c_v", "c_v", 110), ("c_v", "c_v", 10),
     ("npmi", "c_npmi", 110)],
    ids=["c_npmi-10", "c_v-110", "c_v-10", "c_npmi-110"],
)
def test_gensim_sliding_windows(measure, gensim_name, window_size):
    """gensim's boolean sliding window, its defaults 10 (c_npmi) and 110
    (c_v) and the other way round, on texts longer than the window whose
    tokens are distinct (see ``_distinct_token_texts``); a token that is no
    feature ("oov") keeps its place in both."""
    n_features = 2000
    beta = np.random.default_rng(2).dirichlet(np.full(n_features, 0.05), size=4)
    texts = _distinct_token_texts(
        40, n_features, (window_size + 5, window_size + 45), beta, seed=3
    )
    names, dictionary = _gensim_inputs(n_features)
    str_texts = [names[t].tolist() + ["oov"] + names[t[:5]].tolist()[::-1]
                 for t in texts]  # reversed copies sit a window apart
    # Top words of two topics: a text holds one topic's words, so some
    # pairs never share a window and the epsilon counts.
    comps = beta + 0.8 * np.roll(beta, 1, axis=0)
    top = top_word_indices(comps, 10)
    expected = _gensim(
        topics=names[top].tolist(), texts=str_texts, dictionary=dictionary,
        coherence=gensim_name, topn=10, window_size=window_size,
    )
    ours = topic_coherence(str_texts, comps, 10, measure=measure,
                           window_size=window_size, feature_names=names)
    assert np.all(np.isfinite(expected))
    assert np.allclose(ours, expected, rtol=0, atol=GENSIM_ATOL)


# ------------------------------------------------ documented differences


def test_pair_in_every_document_has_npmi_one():
    # gensim: log((1 + eps) / 1) / -log(1 + eps) = -1; the limit is 1.
    X = np.array([[1, 1, 0], [1, 1, 1], [2, 1, 0]])
    comps = np.array([[0.5, 0.4, 0.1]])
    assert topic_coherence(X, comps, 2, measure="npmi") == pytest.approx([1.0])
    # C_V: both words' NPMI vectors are (1, 1): cosine 1.
    assert topic_coherence(X, comps, 2, measure="c_v") == pytest.approx([1.0])


def test_unseen_top_words_score_zero():
    X = np.array([[1, 1, 0], [1, 0, 0], [0, 1, 0]])
    comps = np.array([[0.3, 0.2, 0.5]])  # top word 2 never occurs
    with pytest.warns(UserWarning, match="never occur in X.*pairs score 0") as rec:
        npmi = topic_coherence(X, comps, 3, measure="npmi")
    assert rec[0].filename == __file__  # points at the caller
    # Pairs (2, 0), (2, 1) score 0; (0, 1): log((1/3) / (4/9)) / log(3).
    pair = math.log((1 / 3 + EPS) / (4 / 9)) / -math.log(1 / 3 + EPS)
    assert npmi == pytest.approx([pair / 3], rel=1e-12)
    with pytest.warns(UserWarning, match="NPMI vectors are 0"):
        c_v = topic_coherence(X, comps, 3, measure="c_v")
    assert np.isfinite(c_v).all()
    with pytest.warns(UserWarning, match="conditioning on them score 0"):
        topic_coherence(X, comps, 3, measure="umass_mean")


# ------------------------------------------------------------- validation


_X = np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]])
_C = np.array([[4.0, 3.0, 2.0, 1.0], [1.0, 2.0, 3.0, 4.0]])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(X=_X, measure="uci"), "'measure' parameter"),
        (dict(X=_X, measure="npmi", top_n=1), "at least 2 with measure='npmi'"),
        (dict(X=_X, measure="c_v", smoothing=1.0), "below 1 with measure='c_v'"),
        (dict(X=_X, window_size=10), "list of texts .* no word order"),
        (dict(X=_X, window_size=0), "'window_size' parameter"),
        (dict(X=_X, window_size=True), "'window_size' parameter"),
        (dict(X=_X, feature_names=list("abcd")), "only to read texts"),
        (dict(X=[["a", "b"], ["c"]]), "looks like tokenized texts"),
        (dict(X=[[0, 1, 2], [3]]), "looks like tokenized texts"),
        (dict(X=["a b c"]), "looks like tokenized texts"),
        (dict(X=["a b c"], window_size=2), "text 0 is a str"),
        (dict(X=[[0, 4]], window_size=2), r"outside \[0, 4\)"),
        (dict(X=[[0, -1]], window_size=2), r"outside \[0, 4\)"),
        (dict(X=[[0.0, 1.5]], window_size=2), "integer feature indices"),
        (dict(X=[["a"]], window_size=2), "integer feature indices"),
        (dict(X=[["a"]], window_size=2, feature_names=list("abc")),
         r"one name per feature \(4\)"),
        (dict(X=[["a"]], window_size=2, feature_names=list("abca")), "duplicate"),
        (dict(X=[["a", ["b"]]], window_size=2, feature_names=list("abcd")),
         r"Text 0 of X passed to topic_coherence has a token that is no word: list \['b'\]"),
    ],
)
def test_validation(kwargs, match):
    kwargs.setdefault("top_n", 2)
    with pytest.raises(ValueError, match=match):
        topic_coherence(components=_C, **kwargs)


@pytest.mark.parametrize("top_n", [2, 20])
def test_a_vocabulary_mismatch_is_named_before_top_n(top_n):
    # Components of 3 words against counts of 4: the mismatch is the
    # problem, whether or not top_n also exceeds the components' words.
    with pytest.raises(ValueError, match="components passed to topic_coherence has 3 "
                                         "features but X has 4"):
        topic_coherence(_X, _C[:, :3], top_n)
    with pytest.raises(ValueError, match=r"top_n .* at most the number of features \(4\)"):
        topic_coherence(_X, _C, 5)


def test_texts_as_tuples_and_arrays_and_empty():
    texts = ([0, 1, 2], np.array([2, 3]), (), np.array([], dtype=np.int64))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = topic_coherence(list(texts), _C, 2, measure="npmi", window_size=2)
    expected = _reference(list(_windows([list(t) for t in texts], 2)),
                          top_word_indices(_C, 2), "npmi")
    assert np.allclose(value, expected, rtol=1e-12)


@pytest.mark.parametrize("smoothing", [5e-324, 1e-310, 1e-300])
def test_a_subnormal_smoothing_gives_finite_scores(smoothing):
    """Words 0 and 2 never share a document: their UMass term is
    ``log(s / n(v_j))`` and their NPMI tends to -1 as ``s`` shrinks. The
    ratios ``s / n`` underflow to 0 at the smallest subnormal ``s`` (found
    by the fuzz worker, seed 271828, with 5e-324: UMass -inf, NPMI NaN);
    the scores are taken in logs, so they stay finite."""
    X = np.array([[2, 0, 0], [0, 0, 1], [0, 0, 1], [1, 0, 0]])
    topics = np.array([[1.0, 0.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        umass = topic_coherence(X, topics, 2, smoothing=smoothing, measure="umass")
        npmi = topic_coherence(X, topics, 2, smoothing=smoothing, measure="npmi")
        c_v = topic_coherence(X, topics, 2, smoothing=smoothing, measure="c_v")
    # pair (2 | 0) or (0 | 2), whichever is ranked second, over a document count of 2
    assert umass == pytest.approx([math.log(smoothing) - math.log(2)], rel=1e-12)
    log_joint = math.log(smoothing) - math.log(4)
    assert npmi == pytest.approx([(log_joint - math.log(2 * 2 / 16)) / -log_joint], rel=1e-12)
    assert -1 < npmi[0] < -0.99 and np.isfinite(c_v).all()
