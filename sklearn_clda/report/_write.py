"""``write_report``: the report folder of a fitted CompoundLDA."""

import os
from numbers import Integral, Real
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params

from .._corpus import StrictInterval, quiet_check_array
from ..inspection._hierarchy import themes_for
from ..inspection._utils import check_clda
from ._figures import NO_FIGURES_NOTE, draw_figures
from ._covariate_effects import check_covariates, covariate_problem
from ._files import (
    copy_static,
    json_text,
    output_problem,
    staged_output,
    write_file,
    write_text,
)
from ._load import InputError
from ._render import render_page
from ._summary import build_summary
from ._tables import write_tables


@validate_params(
    {
        "model": "no_validation",  # a fitted CompoundLDA or Pipeline: checked below
        "X": ["array-like", "sparse matrix"],
        "feature_names": ["array-like"],
        "out_dir": [str, os.PathLike],
        "title": [str],
        "groups": ["array-like", None],
        "texts": ["array-like", None],
        "texts_info": [dict, None],
        "pipeline": [HasMethods(["fit"]), None],
        "settings": [dict, None],
        "fit_seconds": [StrictInterval(Real, 0, np.inf, closed="left"), None],
        "top_words": [StrictInterval(Integral, 1, None, closed="left")],
        "n_distinctive": [StrictInterval(Integral, 0, None, closed="left")],
        "n_themes": [StrictInterval(Integral, 0, None, closed="left"), StrOptions({"auto"})],
        "interval": [StrictInterval(Real, 0, 1, closed="neither")],
        "model_note": [str, None],
        "extension": [dict, None],
        "dpi": [StrictInterval(Integral, 1, None, closed="left")],
        "chains": [list, tuple, None],
        "figures": ["boolean"],
        "covariates": ["array-like", dict, None],
    },
    prefer_skip_nested_validation=True,
)
def write_report(
    model,
    X,
    feature_names,
    out_dir,
    *,
    title="Compound LDA report",
    groups=None,
    texts=None,
    texts_info=None,
    pipeline=None,
    settings=None,
    fit_seconds=None,
    top_words=10,
    n_distinctive=3,
    n_themes="auto",
    interval=0.9,
    model_note=None,
    extension=None,
    dpi=110,
    chains=None,
    figures=True,
    covariates=None,
):
    """Write an HTML report of a fitted CompoundLDA to a folder.

    The folder gets ``index.html`` with its style sheet ``report.css`` and
    script ``report.js`` (nothing is fetched from the network: the page
    works offline, from this folder alone), the figures as PNG files, every
    table of the page as a CSV file, ``report.json`` (the numbers the page
    shows, from which it is rendered), ``model.npz`` (``model`` saved by
    :func:`sklearn_clda.save_model`, which :func:`sklearn_clda.load_model`
    reads without pickle), ``vocabulary.txt`` (``feature_names``, one per
    line) and ``model.joblib`` (``pipeline`` if given, else ``model``; a
    pickle, to be loaded only from a trusted source, as the page says).

    An earlier report in ``out_dir`` is replaced as a whole: the new one is
    written to a hidden folder inside ``out_dir`` and its files are then
    moved over the old ones (``os.replace``), ``index.html`` last, and the
    old report's files the new one lacks are removed (other files are left
    alone). A failed or interrupted write leaves the old report as it was,
    or, if it stops during the moves, no ``index.html``. If
    one of these files in ``out_dir`` is a symbolic link (which could point
    outside the folder), or is not a regular file, nothing is written and
    :class:`InputError` is raised. ``out_dir`` itself may be a symbolic
    link to a folder.

    The page shows: a summary (the input file's name, documents,
    collections with their document and token counts, the effective
    sample size of their mixtures and, from three collections on, the
    closest collection by mixture; vocabulary, settings, fit time); the
    topics with their label words (FREX when the analysis API provides it,
    beside the most probable words), size, coherence, exclusivity (with a
    figure of the two) and representative documents, and which topics go
    together in documents (their correlations within the collections,
    beside those across the corpus, as a graph and a table); the
    collections' topic mixtures as a heatmap
    (in the topic table's order), as bars (past ten collections, points in
    a panel per topic) and as a table with posterior intervals, and, for
    ordered collection labels (numbers or dates), as trends; how far
    apart every two collections' mixtures are (the Hellinger distance's
    posterior mean as a matrix, alike collections side by side, and with
    intervals in ``collection_distances.csv``, up to 40 collections); for each
    collection the topics most over-represented relative to the
    corpus-wide mixture, with documents, and its documents that read like
    another collection (own collection's posterior probability below 0.1,
    by :func:`~sklearn_clda.inspection.document_collections` seeded with 0;
    every document's in ``document_collections.csv``; up to 150 million
    tokens x topics and 40 collections); every pair of collections compared
    topic by topic (on the page for up to 12 collections, in
    ``collection_comparisons.csv`` for up to 40); and fit diagnostics. A
    difference is called clear only when its interval excludes 0 and rests
    on an effective sample size of at least 100 draws; the page names the
    intervals that rest on fewer.
    With several ``chains``, a difference on fewer effective draws whose
    interval in each chain alone excludes 0 on the same side is marked
    "every chain" (chains settled in different modes pool to a few
    effective draws however long they run; such a direction holds in all
    of them).
    Past 40 collections, the per-collection parts of the page show the 40
    with the most documents (the CSV tables and report.json hold all).
    Tables sort by a click on their headers, and a search box above the
    topic table shows the topics with the words typed. All user text
    (words, labels, title, document snippets) is HTML-escaped by the
    templates.

    Parameters
    ----------
    model : CompoundLDA or Pipeline
        A fitted :class:`~sklearn_clda.CompoundLDA`, or a fitted Pipeline
        ending with one (it is then also the saved ``pipeline``). Fit it
        with ``evaluate_every > 0`` to get a log-likelihood curve, and keep
        enough draws (``max_iter``, ``thin``) for posterior intervals.

    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Document-term counts of the documents the model was fitted on, used
        for coherence, topic sizes, token counts and document snippets.
        The documents' topic proportions are the fit's when ``X`` and
        ``groups`` are the fitted documents in the fitted order (the fit
        keeps a digest of them); other documents are folded in
        (``transform``), with a note on the page, and
        ``document_topics.csv`` is not written.

    feature_names : array-like of str of shape (n_features,)
        The vocabulary, in column order.

    out_dir : str or path-like
        Folder to write to; created if needed. An empty string is refused
        (it would mean the current folder).

    title : str, default="Compound LDA report"
        Title of the page.

    groups : array-like of shape (n_samples,), default=None
        Collection label of each row of ``X``; gives the collections'
        token counts and the collection of each listed document.

    texts : sequence of str of shape (n_samples,), default=None
        The raw text of each row of ``X``, shown (shortened) for the
        representative documents. ``None`` shows each document's most
        frequent words instead.

    texts_info : dict, default=None
        Description of the input shown in the summary: ``"source"`` (only
        its last component, the file or folder name, is shown and saved),
        ``"format"``, ``"text_column"``, ``"group_column"``, ``"n_read"``,
        ``"n_skipped"`` and ``"notes"`` (list of str), as returned by
        :func:`load_documents`.

    pipeline : Pipeline, default=None
        The fitted pipeline (e.g. ``CountVectorizer`` + ``CompoundLDA``)
        saved as ``model.joblib``. ``None`` saves ``model`` alone.
        ``model.npz`` always holds ``model`` alone.

    settings : dict, default=None
        Further settings to list (e.g. the vectorizer's), name -> value.

    fit_seconds : float, default=None
        Wall-clock fit time; ``None`` uses the sampler's own timing.

    top_words : int, default=10
        Words per topic in the tables (and for the coherence).

    n_distinctive : int, default=3
        Topics listed per collection in "what distinguishes each
        collection".

    n_themes : int or "auto", default="auto"
        Number of themes the topics are grouped into by their words
        (:func:`~sklearn_clda.inspection.topic_themes`), each with every
        collection's share and its interval (the sum of the theme's topics
        in every draw). From 2 to the number of topics minus one; 0 for
        none. "auto" means the square root of the number of topics,
        rounded (4 themes of 20 topics), and none below 10 topics.

    interval : float, default=0.9
        Mass of the equal-tailed posterior intervals.

    model_note : str, default=None
        A sentence about the saved model, shown in the page.

    extension : dict, default=None
        What :func:`extend_chain` did to reach enough effective draws, as
        it returns it; shown in the diagnostics.

    dpi : int, default=110
        Resolution of the PNG figures.

    chains : list of CompoundLDA or Pipeline, default=None
        Further fits of the same model on the same data with other seeds
        (``random_state``): several chains. Their topics are lined up with
        ``model``'s (:func:`~sklearn_clda.inspection.align_chains`) and
        their draws of the collection mixtures pooled with ``model``'s, so
        that the proportions, intervals, comparisons and trends carry the
        uncertainty one chain cannot show, and the R-hat says whether the
        chains agree. The topics' words, sizes and documents are
        ``model``'s; topics that some chain lacks (its closest topic is
        farther than 0.5 in total variation) are marked. The saved model
        is ``model``.

    figures : bool, default=True
        Draw the figures (with matplotlib). ``False`` writes the page, the
        tables and the models without them, and says so on the page: it
        needs no matplotlib, and is much quicker (the figures took 2.8 of
        the 3 s of a 60-document report on a slow 2-core machine, and 7 of
        the 10 s of the 16-newsgroups report at ``K = 20``).

    covariates : dict, DataFrame or array-like of shape (n_samples, n_covariates), default=None
        Numbers per document (a date as a decimal year, an author's age, a
        rating: up to 8 columns, named by the dict's keys or the
        DataFrame's columns), NaN where a value is missing. The page then
        gets a section on how each moves the topics' shares, with a table
        per covariate, the figure ``topic_effects.png`` and the table
        ``topic_effects.csv``: the coefficients of
        :func:`~sklearn_clda.inspection.topic_effects` (stm's
        ``estimateEffect``; seeded with 0, ``ci=interval``) of the
        documents with words and a value of every covariate, and each
        slope's change in share from the covariate's 10th to its 90th
        percentile (from its lowest to its highest value for a covariate
        of two values). A covariate of at least 10 distinct values also
        gets each topic's curve along it
        (:func:`~sklearn_clda.inspection.topic_share_curves`, seeded with
        0, the other covariates at their medians): the figure
        ``topic_share_curves.png`` (the six topics that vary most along
        each) and the table ``topic_share_curves.csv`` (every topic). The
        topics are ``model``'s.

    Returns
    -------
    summary : dict
        The content of ``report.json``; ``summary["files"]`` lists the
        files written and ``summary["index_html"]`` is the page's path.

    Raises
    ------
    InputError
        If ``out_dir`` cannot hold the report (see above).
    ValueError
        If the model is not a fitted CompoundLDA or the inputs do not match
        it (e.g. a feature name with a line break).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> from sklearn_clda.report import write_report
    >>> corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=2,
    ...                               docs_per_collection=20, doc_length=30,
    ...                               random_state=0)
    >>> clda = CompoundLDA(n_components=3, max_iter=60, thin=2, random_state=0)
    >>> clda = clda.fit(corpus.data, groups=corpus.groups)
    >>> words = [f"w{i}" for i in range(30)]
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     summary = write_report(clda, corpus.data, words, folder, groups=corpus.groups)
    ...     page = Path(summary["index_html"]).read_text(encoding="utf-8")
    >>> summary["n_components"], summary["labels"]["method"]
    (3, 'frex')
    >>> "index.html" in summary["files"] and "collection_topics.csv" in summary["files"]
    True
    """
    model, given_pipeline, X, names, groups = _check_inputs(model, X, feature_names, groups)
    n_themes = themes_for(n_themes, model.components_.shape[0])
    chains = _check_chains(model, chains)
    texts = _check_texts(texts, X.shape[0])
    pipeline = pipeline if pipeline is not None else given_pipeline
    covariates = check_covariates(covariates, X.shape[0])
    if covariates is not None and covariate_problem(covariates, X):
        raise ValueError(covariate_problem(covariates, X))
    out = _check_folder(out_dir)
    options = Bunch(
        title=title, groups=groups, texts=texts, texts_info=texts_info,
        settings=settings, top_words=top_words, n_distinctive=n_distinctive,
        n_themes=n_themes, interval=interval, model_note=model_note, extension=extension,
        chains=chains, covariates=covariates, pipeline_saved=pipeline is not None,
        fit_seconds=_fit_seconds(model, fit_seconds),
    )
    # (before the folder is made: chains that are not chains of the model
    # are found out here, and nothing is written)
    summary, parts = build_summary(model, X, names, options)
    if not figures:
        summary["notes"].append(NO_FIGURES_NOTE)
    out.mkdir(parents=True, exist_ok=True)
    with staged_output(out) as stage:
        summary["figures"] = (draw_figures(model, names, stage, parts, summary, dpi)
                              if figures else {})
        summary["downloads"] = write_tables(stage, summary, parts, groups)
        files = ["index.html", "report.json", *copy_static(stage)]
        files += _write_models(stage, model, pipeline, names)
        summary["files"] = sorted(
            set(files) | set(summary["figures"].values()) | set(summary["downloads"].values())
        )
        write_text(stage, "index.html", render_page(summary))
        write_text(stage, "report.json", json_text(summary))
    summary["index_html"] = str(out / "index.html")
    return summary


def _check_folder(out_dir):
    """``out_dir`` as a Path, or InputError if it cannot hold the report."""
    if os.fspath(out_dir) == "":
        raise InputError("the output folder is an empty path; name a folder")
    out = Path(out_dir)
    problem = output_problem(out)
    if problem:
        raise InputError(problem)
    return out


def _fit_seconds(model, fit_seconds):
    if fit_seconds is not None:
        return float(fit_seconds)
    seconds = (getattr(model, "trace_", None) or {}).get("seconds")
    return float(seconds[-1]) if seconds is not None and len(seconds) else None


def _check_inputs(model, X, feature_names, groups):
    from sklearn.pipeline import Pipeline
    
    pipeline = None
    if isinstance(model, Pipeline):
        pipeline, model = model, model[-1]
    check_clda(model, "write_report")
    if getattr(model, "algorithm", None) == "vem":
        raise ValueError(
            "write_report needs a Gibbs fit of CompoundLDA (algorithm='ags' or 'mgs'): "
            "its page rests on the posterior draws of pi and the log-likelihood trace, "
            "which a fit with algorithm='vem' does not keep."
        )
    X = sp.csr_matrix(quiet_check_array(X, caller="write_report", accept_sparse="csr"))
    n_features = model.components_.shape[1]
    if X.shape[1] != n_features:
        raise ValueError(
            f"X has {X.shape[1]} columns but the model has {n_features} features."
        )
    names = np.asarray(feature_names, dtype=object).ravel()
    if names.shape[0] != n_features:
        raise ValueError(
            f"feature_names has {names.shape[0]} entries but the model has "
            f"{n_features} features."
        )
    names = np.array([str(n) for n in names], dtype=object)
    broken = [n for n in names if n.splitlines() not in ([n], [])]
    if broken:
        raise ValueError(
            f"feature_names must not hold line breaks (vocabulary.txt lists one per "
            f"line), got {broken[0]!r}."
        )
    if groups is not None:
        groups = list(np.asarray(groups, dtype=object).ravel())
        if len(groups) != X.shape[0]:
            raise ValueError(
                f"groups has {len(groups)} labels but X has {X.shape[0]} rows."
            )
        groups = _check_known_groups(model, groups)
    return model, pipeline, X, names, groups


def _check_chains(model, chains):
    """The fitted CompoundLDA of ``chains`` (Pipelines unwrapped): chains of
    ``model``'s model on the same data. Whether they are the same model with
    other seeds is checked when their topics are lined up."""
    from sklearn.pipeline import Pipeline

    fits = []
    for index, chain in enumerate(chains or [], start=1):
        fit = chain[-1] if isinstance(chain, Pipeline) else chain
        check_clda(fit, "write_report")
        if fit is model or any(fit is other for other in fits):
            raise ValueError(
                f"write_report got the same fitted model twice (chain {index}); several "
                "chains need separate fits with different random_state."
            )
        if not np.array_equal(np.asarray(fit.collection_sizes_),
                              np.asarray(model.collection_sizes_)):
            raise ValueError(
                f"chains[{index - 1}] was not fitted on the model's data: its "
                "collections have other numbers of documents."
            )
        fits.append(fit)
    return fits


def _check_known_groups(model, groups):
    """``groups`` as the model's own labels (matched by their text, so that
    "1" names the collection fitted as 1); ``ValueError`` if one is not a
    label the model was fitted with."""
    if model.groups_ is None:
        return groups
    known = {str(g): g for g in model.groups_}
    unknown = sorted({str(g) for g in groups} - set(known))
    if unknown:
        raise ValueError(
            f"groups passed to write_report hold labels the model was not fitted with: "
            f"{unknown[:5]}{'...' if len(unknown) > 5 else ''}; its collections are "
            f"{sorted(known)[:10]}. Pass the labels of the documents it was fitted on."
        )
    return [known[str(g)] for g in groups]


def _check_texts(texts, n_samples):
    if texts is None:
        return None
    texts = list(texts)
    if len(texts) != n_samples:
        raise ValueError(f"texts has {len(texts)} entries but X has {n_samples} rows.")
    return texts


def _write_models(out, model, pipeline, names):
    """Write model.npz, vocabulary.txt and model.joblib; return the files' names."""
    import joblib

    from .._io import _dump_npz

    saved = pipeline if pipeline is not None else model
    return [
        write_file(out, "model.npz", lambda fh: _dump_npz(model, fh)),
        write_text(out, "vocabulary.txt", "".join(f"{n}\n" for n in names)),
        write_file(out, "model.joblib", lambda fh: joblib.dump(saved, fh)),
    ]
