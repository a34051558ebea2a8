"""The code shown to users runs: README.md, doc/getting_started.rst,
doc/migration.rst and the "Recipes" section of doc/user_guide.rst.

A page's Python blocks (```` ```python ```` fences in Markdown,
``.. code-block:: python`` in reStructuredText) run in the page's order in
one namespace, in a temporary working folder, with warnings of the
``UserWarning`` family (an unseen collection, rounded counts) turned into
errors. A block with ``>>>`` prompts runs as a doctest, so its shown
results are checked too.

Two substitutions keep the pages fast without changing what they show:

- every ``fit`` of :class:`~sklearn_clda.LDAGibbs` and
  :class:`~sklearn_clda.CompoundLDA` runs at most ``MAX_SWEEPS`` sweeps
  (the parameters are restored when it returns, so reprs are unchanged);
- on the pages that ask for it in ``PAGES``, ``load_news16()`` returns the
  first ``n_docs`` documents of the corpus (all four collections are among
  them).

The ``GroupKFold`` recipe's routing alias has a direct test of its own at
the end.
"""

import doctest
import functools
import importlib.util
import re
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
import sklearn
from packaging.version import Version
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_validate

import sklearn_clda.datasets
from sklearn_clda import CompoundLDA, LDAGibbs
from sklearn_clda.datasets import load_news16

REPO_ROOT = Path(__file__).resolve().parents[1]
MAX_SWEEPS = 20

# page -> (section title or None for the whole page, first n documents of
# news16 or None for all of it)
PAGES = {
    # The README's grid search fits 15 models.
    "README.md": (None, 600),
    # Its first doctest shows the whole corpus's shape.
    "doc/getting_started.rst": (None, None),
    "doc/migration.rst": (None, None),
    "doc/user_guide.rst": ("Recipes", None),
}
# Packages a page may need beyond the test extra.
OPTIONAL = ("pandas", "matplotlib", "pyLDAvis", "joblib")

_RST_BLOCK = re.compile(r"^( *)\.\. code-block:: python\s*$")
_MD_BLOCK = re.compile(r"^```python\s*$")


# ------------------------------------------------------------- extraction
def _rst_blocks(lines, first_line):
    """(line number, code) of every ``.. code-block:: python`` in ``lines``."""
    blocks = []
    i = 0
    while i < len(lines):
        match = _RST_BLOCK.match(lines[i])
        i += 1
        if not match:
            continue
        indent = len(match.group(1))
        while i < len(lines) and lines[i].strip().startswith(":"):  # options
            i += 1
        body, start = [], i + first_line
        while i < len(lines) and (
            not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent
        ):
            body.append(lines[i])
            i += 1
        code = _dedent(body)
        if code.strip():
            blocks.append((start, code))
    return blocks


def _md_blocks(lines):
    """(line number, code) of every ```` ```python ```` fence in ``lines``."""
    blocks = []
    i = 0
    while i < len(lines):
        if not _MD_BLOCK.match(lines[i]):
            i += 1
            continue
        start = i + 2
        end = lines.index("```", i + 1)
        blocks.append((start, "\n".join(lines[i + 1 : end]) + "\n"))
        i = end + 1
    return blocks


def _dedent(lines):
    return textwrap.dedent("\n".join(lines)).strip("\n") + "\n"


def _section(lines, title):
    """The lines of the top-level rst section ``title`` and its first line number."""
    for i in range(len(lines) - 1):
        if lines[i] == title and set(lines[i + 1]) == {"="}:
            end = next(
                (
                    j
                    for j in range(i + 2, len(lines) - 1)
                    if lines[j] and set(lines[j + 1]) == {"="}
                    and len(lines[j + 1]) >= len(lines[j])
                ),
                len(lines),
            )
            return lines[i:end], i + 1
    raise AssertionError(f"no section {title!r}")


def page_blocks(page):
    """The Python blocks of a page (or of its section listed in PAGES)."""
    section, _ = PAGES[page]
    lines = (REPO_ROOT / page).read_text(encoding="utf-8").splitlines()
    if page.endswith(".md"):
        return _md_blocks(lines)
    first = 1
    if section is not None:
        lines, first = _section(lines, section)
    return _rst_blocks(lines, first)


# ---------------------------------------------------------------- running
def _run_block(page, line, code, namespace):
    """exec a plain block, or run a block with prompts as a doctest."""
    name = f"{page}:{line}"
    if code.lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(code, namespace, name, page, line)
        runner = doctest.DocTestRunner(
            optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
        )
        report = []
        runner.run(test, out=report.append, clear_globs=False)
        namespace.update(test.globs)  # the DocTest ran in a copy
        assert runner.failures == 0, f"doctest in {name} failed:\n" + "".join(report)
    else:
        exec(compile(code, name, "exec"), namespace)


def _capped_fit(fit):
    """``fit`` with at most MAX_SWEEPS sweeps; the parameters are restored."""

    @functools.wraps(fit)
    def capped(self, *args, **kwargs):
        saved = self.max_iter, self.burn_in
        self.max_iter = min(self.max_iter, MAX_SWEEPS)
        if self.burn_in is not None:
            self.burn_in = min(self.burn_in, self.max_iter // 2)
        try:
            return fit(self, *args, **kwargs)
        finally:
            self.max_iter, self.burn_in = saved

    return capped


def _first_documents(n_docs):
    """load_news16 that keeps the first ``n_docs`` documents."""

    def load(*, return_X_y=False):
        news = load_news16()
        for key in ("data", "groups", "categories"):
            news[key] = news[key][:n_docs]
        return (news.data, news.groups) if return_X_y else news

    return load


@pytest.fixture
def snippet_env(monkeypatch, tmp_path):
    """Fast fits, a scratch working folder, off-screen figures, and the
    global configuration restored afterwards."""
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    for cls in (LDAGibbs, CompoundLDA):
        monkeypatch.setattr(cls, "fit", _capped_fit(cls.fit))
    monkeypatch.chdir(tmp_path)
    with sklearn.config_context(), warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.filterwarnings("ignore", "FigureCanvasAgg is non-interactive")
        if Version(sklearn.__version__).release[:2] < (1, 8):
            # The pages' GridSearchCV(pipe, ...) with scoring=None: on these
            # versions it scores without the labels, with this warning (the
            # user guide says so, and names GroupsScorer).
            warnings.filterwarnings("ignore", ".*scoring=sklearn_clda.metrics.GroupsScorer")
        yield monkeypatch
    plt.close("all")


@pytest.mark.parametrize("page", sorted(PAGES))
def test_page_snippets_run(page, snippet_env):
    blocks = page_blocks(page)
    assert blocks, f"no Python blocks found in {page}"
    _, n_docs = PAGES[page]
    if n_docs is not None:
        snippet_env.setattr(sklearn_clda.datasets, "load_news16", _first_documents(n_docs))
    namespace = {"__name__": "__snippets__"}
    for line, code in blocks:
        # Run what can run: stop at the first block that needs a package
        # that is not installed.
        for module in _missing_optional(code):
            pytest.skip(f"{page}:{line} needs {module}; the blocks before it ran")
        _run_block(page, line, code, namespace)


def _missing_optional(code):
    """The OPTIONAL packages that ``code`` imports and that are not installed."""
    return [
        module
        for module in OPTIONAL
        if re.search(rf"^\s*(>>> )?(import|from) {module}\b", code, re.M)
        and importlib.util.find_spec(module) is None
    ]


def test_extraction_finds_every_block():
    """The extractor sees the blocks it should (a parser that found none
    would make the test above pass vacuously)."""
    counts = {page: len(page_blocks(page)) for page in PAGES}
    text = {page: (REPO_ROOT / page).read_text(encoding="utf-8") for page in PAGES}
    assert counts["README.md"] == text["README.md"].count("```python")
    for page in ("doc/getting_started.rst", "doc/migration.rst"):
        assert counts[page] == text[page].count(".. code-block:: python"), page
    # The recipes: DataFrame, saving (npz, joblib), GroupKFold, pyLDAvis (2).
    assert counts["doc/user_guide.rst"] == 6


# ------------------------------------------- the GroupKFold recipe's alias
@pytest.fixture(scope="module")
def labelled_corpus():
    """400 posts; collections (4 hierarchies) and newsgroups (16) differ."""
    news = load_news16()
    n = 400
    return news.data[:n], news.groups[:n], news.categories[:n]


def _aliased_model():
    clda = CompoundLDA(n_components=4, max_iter=20, random_state=0)
    clda.set_fit_request(groups="collections")
    clda.set_score_request(groups="collections")
    return clda


def test_group_kfold_splits_on_groups_and_fits_on_collections(labelled_corpus):
    """With ``set_*_request(groups="collections")`` under metadata routing,
    GroupKFold consumes ``groups`` (the newsgroups) and the estimator's fit
    and score get ``collections`` (the hierarchies)."""
    X, collections, newsgroups = labelled_corpus
    with sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings():
        # Newsgroup labels reaching the model would be unseen collections.
        warnings.simplefilter("error", UserWarning)
        results = cross_validate(
            _aliased_model(), X, cv=GroupKFold(n_splits=4),
            params={"groups": newsgroups, "collections": collections},
            return_estimator=True, return_indices=True,
        )
    folds = zip(results["estimator"], results["indices"]["train"],
                results["indices"]["test"], results["test_score"])
    for model, train, test, score in folds:
        # the splitter held out whole newsgroups
        assert not set(newsgroups[train]) & set(newsgroups[test])
        # fit got the collections of the training rows
        assert model.groups_.tolist() == sorted(set(collections[train]))
        # score got the collections of the test rows
        expected = model.score(X[test], groups=collections[test])
        assert score == pytest.approx(expected, rel=1e-12)


def test_grid_search_with_collections_alias(labelled_corpus):
    X, collections, newsgroups = labelled_corpus
    with sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        search = GridSearchCV(
            _aliased_model(), {"n_components": [3, 4]}, cv=GroupKFold(n_splits=3)
        ).fit(X, groups=newsgroups, collections=collections)
    assert search.best_estimator_.groups_.tolist() == sorted(set(collections))
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
