"""How well ``document_collections`` tells held-out documents' collections apart.

news16 is split into training and held-out documents (a stratified 80/20
split of the documents, ``--seed``). CompoundLDA is fitted on the training
documents with their collections: the 4 top-level ones, or the 16
newsgroups (``--collections 16``). ``document_collections`` then gives
each held-out document's posterior over the collections. Printed:

- the share of held-out documents whose most likely collection is their
  own (accuracy), with both priors over the collections, and the seconds
  it took;
- calibration: the held-out documents binned by the probability of their
  most likely collection, each bin's mean probability against the share
  of its documents that are right (a calibrated posterior has the two
  equal);
- the design's ablation: the fold-in's expected topic counts (``transform``
  with the corpus-wide mixture) plugged into the Dirichlet-multinomial of
  each collection's posterior mean mixture, instead of sampled
  assignments (every topic then counts as used a little);
- for reference, classifiers of the words fitted on the same split
  (scikit-learn's MultinomialNB and LogisticRegression): how much of what
  tells the collections apart lies in the topic mixtures, and how much in
  the words within the topics. This is not a contest: the topics are
  fitted for the corpus, not for the labels.

Run: python benchmarks/bench_document_collections.py [--collections 16]
"""

import _common  # noqa: F401  (pins BLAS/OpenMP threads first)

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from _common import environment_info, format_table, log  # noqa: E402

BINS = (0.0, 0.5, 0.7, 0.9, 0.99, 1.0)


def _split(n_collections, seed):
    from sklearn.model_selection import train_test_split

    from sklearn_clda.datasets import load_news16

    news = load_news16()
    labels = np.asarray(news.groups if n_collections == 4 else news.categories)
    train, test = train_test_split(np.arange(labels.size), test_size=0.2, random_state=seed,
                                   stratify=labels)
    return news.data[train], labels[train], news.data[test], labels[test]


def _calibration(table):
    """Rows of the calibration table: the bin, its documents, their mean
    probability of the most likely collection and the share right."""
    confidence = table["probability"].to_numpy()
    right = (table["most_likely"] == table["collection"]).to_numpy()
    which = np.digitize(confidence, BINS[1:-1])
    rows = []
    for b in range(len(BINS) - 1):
        inside = which == b
        if inside.any():
            rows.append([f"{BINS[b]:.2f}-{BINS[b + 1]:.2f}", int(inside.sum()),
                         f"{confidence[inside].mean():.3f}", f"{right[inside].mean():.3f}"])
    return rows


def _plug_in_accuracy(model, X_test, g_test):
    """Accuracy of the most likely collection with the fold-in's expected
    topic counts in place of sampled assignments."""
    from scipy.special import gammaln

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (groups=None: the corpus-wide mixture)
        pseudo = model.transform(X_test, normalize=False)
    sizes = model.collection_sizes_ / model.collection_sizes_.sum()
    neutral = model.gamma_ * sizes @ model.collection_topic_
    counts = np.maximum(pseudo - neutral, 0.0)
    alphas = np.maximum(model.gamma_ * model.collection_topic_, np.finfo(float).tiny)
    log_lik = np.stack([(gammaln(a + counts) - gammaln(a)).sum(axis=1) for a in alphas], 1)
    best = np.argmax(log_lik + np.log(sizes), axis=1)
    return (model.groups_[best] == g_test).mean()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--collections", type=int, choices=(4, 16), default=4)
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--max-iter", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import MultinomialNB

    from sklearn_clda import CompoundLDA
    from sklearn_clda.inspection import document_collections

    log(environment_info())
    X_train, g_train, X_test, g_test = _split(args.collections, args.seed)
    start = time.perf_counter()
    model = CompoundLDA(n_components=args.k, eta=0.01, max_iter=args.max_iter, thin=2,
                        random_state=args.seed).fit(X_train, groups=g_train)
    log(f"CompoundLDA(K={args.k}, {args.max_iter} sweeps) on {X_train.shape[0]} documents, "
        f"{args.collections} collections: {time.perf_counter() - start:.1f} s")
    rows, tables = [], {}
    for prior in ("sizes", "uniform"):
        start = time.perf_counter()
        table = document_collections(model, X_test, g_test, prior=prior, random_state=0)
        seconds = time.perf_counter() - start
        tables[prior] = table
        accuracy = (table["most_likely"] == table["collection"]).mean()
        rows.append([f"document_collections, prior={prior!r}", f"{accuracy:.3f}",
                     f"{seconds:.1f}"])
    start = time.perf_counter()
    rows.append(["expected counts plugged in (ablation)",
                 f"{_plug_in_accuracy(model, X_test, g_test):.3f}",
                 f"{time.perf_counter() - start:.1f}"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the solver's convergence note)
        for name, clf in (("MultinomialNB (words)", MultinomialNB()),
                          ("LogisticRegression (words)", LogisticRegression(max_iter=2000))):
            start = time.perf_counter()
            accuracy = (clf.fit(X_train, g_train).predict(X_test) == g_test).mean()
            rows.append([name, f"{accuracy:.3f}", f"{time.perf_counter() - start:.1f}"])
    print(f"\nHeld-out documents: {X_test.shape[0]}, {args.collections} collections, "
          f"chance (largest collection): "
          f"{np.unique(g_test, return_counts=True)[1].max() / g_test.size:.3f}\n")
    print(format_table(["method", "accuracy", "seconds"], rows))
    print("\nCalibration, prior='sizes' (most likely collection's probability):\n")
    print(format_table(["probability", "documents", "mean probability", "share right"],
                       _calibration(tables["sizes"])))


if __name__ == "__main__":
    main()
