"""Command line: ``python -m sklearn_clda``.

Fits :class:`~sklearn_clda.CompoundLDA` on the bundled 16-newsgroups corpus
(four collections: comp, politics, rec, sci) and prints the top words of
every topic beside each collection's topic proportions, the view of the
compound LDA paper's Figure 1.
"""

import argparse
import sys
import time

import numpy as np


def _build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m sklearn_clda",
        description=(
            "Fit compound LDA on the bundled 16-newsgroups corpus (10,764 "
            "documents in 4 collections) and print each topic's top words "
            "with every collection's topic proportions."
        ),
    )
    parser.add_argument(
        "-k", "--n-components", type=int, default=20, metavar="K",
        help="number of topics (default: %(default)s)",
    )
    parser.add_argument(
        "-n", "--max-iter", type=int, default=400, metavar="SWEEPS",
        help="Gibbs sweeps; the first half is burn-in (default: %(default)s)",
    )
    parser.add_argument(
        "--seed", type=int, default=0,
        help="random seed; the same seed gives the same output (default: %(default)s)",
    )
    parser.add_argument(
        "--top-words", type=int, default=8, metavar="N",
        help="words shown per topic (default: %(default)s)",
    )
    parser.add_argument(
        "--gamma", type=float, default=None,
        help="document concentration around the collection mixture "
        "(default: 0.1 * K)",
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="do not show the progress bar",
    )
    return parser


def _check_args(parser, args):
    if args.n_components < 1:
        parser.error("--n-components must be at least 1")
    if args.max_iter < 2:
        parser.error("--max-iter must be at least 2")
    if args.top_words < 1:
        parser.error("--top-words must be at least 1")
    if args.gamma is not None and not args.gamma > 0:
        parser.error("--gamma must be positive")


def format_topic_table(model, feature_names, top_words=8):
    """Text table: one line per topic with its top words and collection shares.

    Parameters
    ----------
    model : CompoundLDA
        A fitted model.
    feature_names : array-like of str
        Vocabulary, in column order.
    top_words : int, default=8
        Words shown per topic.

    Returns
    -------
    table : str
    """
    feature_names = np.asarray(feature_names)
    pi = model.collection_topic_
    labels = (
        ["all"] if model.groups_ is None else [str(g) for g in model.groups_]
    )
    width = max(8, *(len(label) for label in labels)) + 2
    header = "topic " + "".join(f"{label:>{width}}" for label in labels) + "  top words"
    lines = [header, "-" * len(header)]
    order = np.argsort(-model.components_, axis=1)[:, :top_words]
    for k in range(model.n_components):
        shares = "".join(f"{100 * pi[j, k]:>{width - 1}.1f}%" for j in range(pi.shape[0]))
        words = " ".join(feature_names[order[k]])
        lines.append(f"{k:>5} {shares}  {words}")
    return "\n".join(lines)


def main(argv=None):
    """Run the demo; return the process exit code."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    _check_args(parser, args)

    from sklearn_clda import CompoundLDA
    from sklearn_clda.datasets import load_news16

    news = load_news16()
    n_tokens = int(news.data.sum())
    print(
        f"16-newsgroups: {news.data.shape[0]:,} documents, {news.data.shape[1]:,} "
        f"terms, {n_tokens:,} tokens, collections: {', '.join(news.group_names)}"
    )
    model = CompoundLDA(
        n_components=args.n_components,
        gamma=args.gamma,
        eta=0.01,
        max_iter=args.max_iter,
        random_state=args.seed,
        verbose=0 if args.no_progress else 1,
    )
    start = time.perf_counter()
    model.fit(news.data, groups=news.groups)
    seconds = time.perf_counter() - start
    print(
        f"CompoundLDA(K={args.n_components}, gamma={model.gamma_:g}, eta={model.eta_:g}): "
        f"{args.max_iter} sweeps in {seconds:.1f} s "
        f"({n_tokens * args.max_iter / seconds / 1e6:.1f}M tokens/s)\n"
    )
    print("Topic proportions of each collection (pi_j, posterior mean) and top words:\n")
    print(format_topic_table(model, news.feature_names, args.top_words))
    return 0


if __name__ == "__main__":
    sys.exit(main())
