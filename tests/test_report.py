"""The HTML report: ``python -m sklearn_clda report`` and ``--report DIR``."""

import contextlib
import csv
import html
import io
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import joblib
import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.image import imread  # noqa: E402
from sklearn.feature_extraction.text import CountVectorizer  # noqa: E402

from sklearn_clda import CompoundLDA, load_model  # noqa: E402
from sklearn_clda.report import _files as files_module  # noqa: E402
from sklearn_clda.__main__ import main  # noqa: E402
from sklearn_clda.report import InputError, load_documents, write_report  # noqa: E402
from sklearn_clda.exceptions import UnseenCollectionWarning  # noqa: E402
from sklearn_clda.metrics import top_words, topic_sizes  # noqa: E402

from _signals import interruptible_child  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
FIGURES = [
    "collection_topics_heatmap.png",
    "collection_topics_bars.png",
    "topic_words.png",
    "topic_quality.png",
    "topic_tree.png",
    "topic_map.png",
    "collection_distances.png",
    "log_likelihood_trace.png",
    "pi_trace.png",
    "pi_autocorrelation.png",
    "topic_correlations.png",
]

# Three collections with their own vocabularies (and a shared one); the third
# label needs HTML escaping.
THEMES = {
    "sport": "match goal team player coach season league striker referee stadium".split(),
    "money": "market stock bank investor profit shares trading inflation bonds dividend".split(),
    "science": (
        "research cell protein experiment telescope galaxy physics molecule genome quantum"
    ).split(),
    "shared": "city council road weather school traffic river bridge mayor festival".split(),
}
COLLECTIONS = {
    "Daily Sport": "sport",
    "Money Times": "money",
    "<b>Lab</b> & Sky": "science",
}
REPORT_ARGS = ["--n-components", "3", "--max-iter", "30", "--no-progress"]


def _make_documents(n_per_collection=20, seed=0):
    """60 short documents: mostly the collection's theme, some shared words."""
    rng = random.Random(seed)
    docs = []
    for label, theme in COLLECTIONS.items():
        for _ in range(n_per_collection):
            words = [
                rng.choice(THEMES[theme] if rng.random() < 0.8 else THEMES["shared"])
                for _ in range(rng.randint(20, 35))
            ]
            docs.append((" ".join(words), label))
    return docs


def _write_csv(path, docs, text="body", group="outlet", extra_rows=()):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", text, group])
        for i, (t, g) in enumerate(docs):
            writer.writerow([i, t, g])
        for row in extra_rows:
            writer.writerow(row)
    return path


def _write_jsonl(path, docs, text="text", group="group"):
    with open(path, "w", encoding="utf-8") as fh:
        for t, g in docs:
            fh.write(json.dumps({text: t, group: g}) + "\n")
    return path


def _write_folder(root, docs):
    for i, (t, g) in enumerate(docs):
        folder = root / re.sub(r"<[^>]*>", "", g)  # "<b>Lab</b> & Sky" -> "Lab & Sky"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"doc{i:03d}.txt").write_text(t, encoding="utf-8")
    return root


def _run(argv):
    """``main(argv)`` with stdout and stderr captured (usable in any fixture)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _check_pngs(folder, names=FIGURES):
    """Each figure is a PNG that decodes to a plausible, non-blank image."""
    for name in names:
        assert (folder / name).read_bytes()[:8] == PNG_SIGNATURE, name
        image = imread(folder / name)  # floats in [0, 1], RGB(A)
        height, width = image.shape[:2]
        assert 250 <= height <= 4000 and 300 <= width <= 4000, (name, image.shape)
        rgb = image[..., :3]
        drawn = np.any(rgb < 0.9, axis=-1).mean()  # share of non-white pixels
        assert 0.01 < drawn < 0.9, (name, drawn)
        # Not flat: more than 10 colours (each pixel's 8-bit RGB as one int;
        # np.unique(axis=0) over the rows took seconds a figure).
        colours = np.round(rgb.reshape(-1, 3) * 255).astype(np.int64) @ [1 << 16, 1 << 8, 1]
        assert len(np.unique(colours)) > 10, name


def _safe_code(page):
    """The first code block of the page's "Using the saved model" section."""
    section = page[page.index('<section id="model">'):]
    return html.unescape(re.search(r"<pre><code>(.*?)</code></pre>", section, re.S)[1])


# ---------------------------------------------------------------------------
# A report from a CSV file, shared by several tests
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def csv_report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("csv_report")
    docs = _make_documents()
    # One empty and one whitespace-only document, skipped with a note.
    csv_path = _write_csv(
        tmp / "docs.csv", docs, extra_rows=[[60, "", "Daily Sport"], [61, "  \n ", "Money Times"]]
    )
    out = tmp / "report"
    code, stdout, stderr = _run(
        ["report", "--input", str(csv_path), "--text-column", "body",
         "--group-column", "outlet", "--out", str(out), *REPORT_ARGS]
    )
    return {"code": code, "stdout": stdout, "stderr": stderr, "out": out, "docs": docs}


def test_csv_report_writes_page_figures_and_summary(csv_report):
    assert csv_report["code"] == 0, csv_report["stderr"]
    out = csv_report["out"]
    assert "Read 60 documents in 3 collections" in csv_report["stdout"]
    assert "skipped 2 empty or whitespace-only document(s)" in csv_report["stderr"]
    assert "Traceback" not in csv_report["stderr"]

    page = (out / "index.html").read_text(encoding="utf-8")
    for label in COLLECTIONS:
        assert html.escape(label) in page
    summary = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert summary["n_documents"] == 60
    assert summary["n_components"] == 3
    assert summary["input"]["n_skipped"] == 2
    assert {c["name"]: c["documents"] for c in summary["collections"]} == {
        label: 20 for label in COLLECTIONS
    }
    assert sorted(summary["groups"]) == sorted(COLLECTIONS)
    assert sum(c["tokens"] for c in summary["collections"]) == summary["n_tokens"]
    assert sum(t["share"] for t in summary["topics"]) == pytest.approx(1.0)
    for topic in summary["topics"]:
        assert len(topic["top_words"]) == 10
        assert topic["coherence"] <= 0
        assert 0 < topic["exclusivity"] <= 10  # a sum of 10 FREX scores
        for word in topic["top_words"]:
            assert f"{word}" in page
    # Each collection's most distinctive topic is built from its own theme.
    for entry in summary["distinctive"]:
        top = entry["topics"][0]["topic"]
        theme = THEMES[COLLECTIONS[entry["collection"]]]
        words = summary["topics"][top]["top_words"][:3]
        assert all(word in theme for word in words), (entry["collection"], words)
        row = entry["topics"][0]
        assert row["lower"] <= row["share"] <= row["upper"]
        assert row["ratio"] > 1
    for section in ["Summary", "Topics", "What distinguishes each collection",
                    "Fit diagnostics", "Burn-in", "Coherence", "Fit time"]:
        assert section in page

    _check_pngs(out)
    for name in FIGURES:
        assert f'src="{name}"' in page
    assert set(FIGURES) <= set(summary["files"])


def test_csv_report_says_which_collections_are_alike(csv_report):
    """collection_distances.csv and the page's closest collections are the
    model's posterior distances (collection_distances)."""
    from sklearn_clda.inspection import collection_distances

    out = csv_report["out"]
    model = load_model(out / "model.npz")
    expected = collection_distances(model, ci=0.9)
    with open(out / "collection_distances.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["a"], r["b"]) for r in rows] == list(zip(expected.a, expected.b))
    for key in ["distance", "lower", "upper", "ess", "rhat"]:
        np.testing.assert_allclose([float(r[key]) for r in rows], expected[key], rtol=1e-12)
    summary = _summary(out)
    labels = model.groups_.tolist()
    matrix = np.zeros((3, 3))
    for row in expected.itertuples():
        i, j = labels.index(row.a), labels.index(row.b)
        matrix[i, j] = matrix[j, i] = row.distance
    np.testing.assert_allclose(summary["collection_distances"]["matrix"], matrix, rtol=1e-12)
    np.fill_diagonal(matrix, np.inf)
    for c in summary["collections"]:
        j = labels.index(c["name"])
        assert c["closest"] == labels[int(np.argmin(matrix[j]))]
        assert c["closest_distance"] == pytest.approx(matrix[j].min(), rel=1e-12)
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "<th>Closest collection</th>" in page
    assert 'href="collection_distances.csv"' in page


def _check_collection_words(out, collections):
    """The report's "How each collection words a topic": every topic in the
    table's order with every collection; a collection's expected tokens over
    the topics add up to its tokens; the page shows the words that reach the
    z-score threshold (or "none stands out"), the CSV file every kept word.
    Returns the words shown, ``{(topic, collection): [word, ...]}``."""
    summary = json.loads((out / "report.json").read_text(encoding="utf-8"))
    entries = summary["collection_words"]
    assert [entry["topic"] for entry in entries] == summary["topic_order"]
    tokens = dict.fromkeys(collections, 0.0)
    for entry in entries:
        assert [c["name"] for c in entry["collections"]] == sorted(collections)
        for c in entry["collections"]:
            tokens[c["name"]] += c["tokens"]
    for collection in summary["collections"]:
        assert tokens[collection["name"]] == pytest.approx(collection["tokens"], rel=1e-9)
    page = (out / "index.html").read_text(encoding="utf-8")
    section = page.split("<h3>How each collection words a topic</h3>")[1].split("</section>")[0]
    cells = re.findall(r'<tr><td>(.*?)</td><td class="num">.*?</td>\s*<td>(.*?)</td></tr>',
                       section, re.S)
    min_z = summary["collection_words_min_z"]
    shown = {(entry["topic"], c["name"]): [w["word"] for w in c["words"] if w["z"] >= min_z]
             for entry in entries for c in entry["collections"]}
    assert len(cells) == len(shown)
    for (name, cell), (key, words) in zip(cells, shown.items()):
        assert html.unescape(name) == key[1]
        if words:
            assert re.sub(r"<[^>]*>", "", cell) == " ".join(words)
        else:
            assert "none stands out" in cell
    with open(out / "collection_words.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    kept = [(entry["topic"], c["name"], w["word"], w["z"])
            for entry in entries for c in entry["collections"] for w in c["words"]]
    assert [(int(r["topic"]), r["collection"], r["word"], float(r["z"])) for r in rows] == kept
    return shown


def test_csv_report_shows_each_collection_s_words(csv_report):
    # Each collection keeps to a topic of its own: no collection's words
    # stand out within a topic the others barely use.
    shown = _check_collection_words(csv_report["out"], COLLECTIONS)
    assert not any(shown.values())


def test_report_shows_how_collections_word_a_shared_topic(tmp_path):
    # Both collections write on sport and politics, each with its own word
    # for a match and for the legislature.
    vocab = ["team", "ball", "match", "game", "vote", "party", "parliament", "congress"]
    rng = np.random.default_rng(0)
    rows, groups = [], []
    for country, own in (("uk", (2, 6)), ("us", (3, 7))):
        for _ in range(15):
            for shared, word in (((0, 1), own[0]), ((4, 5), own[1])):
                row = np.zeros(len(vocab), dtype=np.int64)
                row[list(shared)] = rng.integers(4, 7, size=2)
                row[word] = rng.integers(2, 4)
                rows.append(row)
                groups.append(country)
    X = np.array(rows)
    model = CompoundLDA(n_components=2, max_iter=100, random_state=0).fit(X, groups=groups)
    write_report(model, X, vocab, tmp_path / "r", groups=groups, figures=False)
    shown = _check_collection_words(tmp_path / "r", ["uk", "us"])
    sport = int(np.argmax(model.components_[:, vocab.index("ball")]))
    assert shown[(sport, "uk")][0] == "match" and shown[(sport, "us")][0] == "game"
    assert shown[(1 - sport, "uk")][0] == "parliament"
    assert shown[(1 - sport, "us")][0] == "congress"


def test_csv_report_numbers_are_the_model_s(csv_report):
    out = csv_report["out"]
    summary = json.loads((out / "report.json").read_text(encoding="utf-8"))
    model = load_model(out / "model.npz")
    vocabulary = (out / "vocabulary.txt").read_text(encoding="utf-8").splitlines()
    texts = [t for t, _ in csv_report["docs"]]
    X = CountVectorizer(vocabulary=vocabulary).transform(texts)

    assert summary["vocabulary_size"] == len(vocabulary) == model.components_.shape[1]
    assert summary["n_tokens"] == X.sum() == model.n_tokens_
    assert summary["groups"] == model.groups_.tolist()
    assert [c["documents"] for c in summary["collections"]] == model.collection_sizes_.tolist()
    assert summary["model"]["gamma"] == model.gamma_ and summary["model"]["eta"] == model.eta_
    mixtures = summary["collection_topic"]
    assert mixtures["collections"] == model.groups_.tolist()
    np.testing.assert_allclose(mixtures["mean"], model.collection_topic_, rtol=1e-12)
    assert np.all(np.array(mixtures["lower"]) <= np.array(mixtures["mean"]))
    assert np.all(np.array(mixtures["mean"]) <= np.array(mixtures["upper"]))
    weights = model.collection_sizes_ / model.collection_sizes_.sum()
    np.testing.assert_allclose(mixtures["corpus_wide"], weights @ model.collection_topic_)
    from sklearn_clda.inspection import rhat

    np.testing.assert_allclose(mixtures["rhat"], rhat(model.collection_topic_samples_[None]))
    diag = summary["diagnostics"]
    assert diag["rhat_max"] == pytest.approx(np.max(mixtures["rhat"]))
    assert diag["n_rhat_above"] == int(np.sum(np.array(mixtures["rhat"]) > 1.01))
    expected = top_words(model.components_, vocabulary, n=10).tolist()
    assert [t["top_words"] for t in summary["topics"]] == expected
    sizes = topic_sizes(model.doc_topic_, X)
    np.testing.assert_allclose([t["tokens"] for t in summary["topics"]], sizes)
    np.testing.assert_allclose([t["share"] for t in summary["topics"]], sizes / sizes.sum())
    diag = summary["diagnostics"]
    assert (diag["n_iter"], diag["burn_in"], diag["n_draws"]) == (
        model.n_iter_, model.burn_in_, model.collection_topic_samples_.shape[0])
    assert diag["final_log_likelihood"] == model.trace_["log_likelihood"][-1]


def test_csv_report_page_is_self_contained(csv_report):
    out = csv_report["out"]
    page = (out / "index.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    # The style sheet and the one script are files of the folder, not fetched;
    # the map's numbers are a JSON block, which no browser runs.
    assert '<link rel="stylesheet" href="report.css">' in page
    assert re.findall(r"<script[^>]*>", page) == [
        '<script src="report.js" defer>',
        '<script type="application/json" id="topic-map-data">']
    refs = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert {"report.css", "report.js"} <= set(refs)
    for ref in refs:
        assert not re.match(r"[a-z]+:", ref), ref  # no http:, https:, file:
        if not ref.startswith("#"):
            assert (out / ref).is_file(), ref
    for name in ["report.css", "report.js"]:
        text = (out / name).read_text(encoding="utf-8")
        assert not re.search(r"https?:|@import|url\(|fetch\(|XMLHttpRequest", text), name


def test_csv_report_escapes_collection_labels(csv_report):
    page = (csv_report["out"] / "index.html").read_text(encoding="utf-8")
    assert "&lt;b&gt;Lab&lt;/b&gt; &amp; Sky" in page
    assert "<b>Lab</b>" not in page


def test_csv_report_model_loads_and_transforms(csv_report):
    pipe = joblib.load(csv_report["out"] / "model.joblib")
    texts = [t for t, _ in csv_report["docs"][:5]]
    with pytest.warns(UnseenCollectionWarning, match="groups=None"):
        theta = pipe.transform(texts)
    assert theta.shape == (5, 3)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)
    labels = [g for _, g in csv_report["docs"][:5]]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnseenCollectionWarning)
        theta = pipe[-1].transform(pipe[:-1].transform(texts), groups=labels)
    assert theta.shape == (5, 3)


def test_csv_report_shows_the_safe_way_first_and_it_works(csv_report):
    out = csv_report["out"]
    page = (out / "index.html").read_text(encoding="utf-8")
    section = " ".join(page[page.index('<section id="model">'):].split())
    assert section.index("load_model") < section.index("joblib.load")
    assert "runs code stored in the file" in section
    assert "only if you trust" in section
    # The page's own code, run in the report folder, gives the pipeline's
    # topic proportions without unpickling anything.
    texts = [t for t, _ in csv_report["docs"][:6]]
    labels = [g for _, g in csv_report["docs"][:6]]
    namespace = {"texts": texts, "labels": labels}
    cwd = os.getcwd()
    os.chdir(out)
    try:
        exec(_safe_code(page), namespace)  # noqa: S102 - the report's own example
    finally:
        os.chdir(cwd)
    pipe = joblib.load(out / "model.joblib")
    expected = pipe[-1].transform(pipe[:-1].transform(texts), groups=labels)
    np.testing.assert_array_equal(namespace["theta"], expected)
    summary = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert summary["safe_model_file"] == "model.npz"
    assert {"model.npz", "vocabulary.txt", "model.joblib"} <= set(summary["files"])
    assert not list(out.glob(".*.part"))  # no temporary file left


def test_write_report_escapes_words_and_saves_model_alone(csv_report, tmp_path):
    # Reuse the fitted model with a vocabulary whose top word needs escaping.
    pipe = joblib.load(csv_report["out"] / "model.joblib")
    model = pipe[-1]
    texts = [t for t, _ in csv_report["docs"]]
    X = pipe[:-1].transform(texts)
    names = np.array(pipe[:-1].get_feature_names_out(), dtype=object)
    names[np.argmax(model.components_[0])] = "<script>alert('x')</script>"
    summary = write_report(model, X, names, tmp_path / "r", title="<i>T</i> & co",
                           top_words=4, figures=False)
    page = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page
    assert "<script>" not in page and "alert('x')" not in page
    assert "<title>&lt;i&gt;T&lt;/i&gt; &amp; co</title>" in page
    assert "model alone" in page
    assert isinstance(joblib.load(tmp_path / "r" / "model.joblib"), CompoundLDA)
    vocabulary = (tmp_path / "r" / "vocabulary.txt").read_text(encoding="utf-8").split("\n")
    assert vocabulary[: len(names)] == list(names)
    assert summary["model_file_contents"] == "CompoundLDA"
    assert summary["collections"][0]["tokens"] is None  # groups not given


# ---------------------------------------------------------------------------
# Other input formats
# ---------------------------------------------------------------------------


def test_jsonl_report(tmp_path):
    docs = _make_documents(n_per_collection=12, seed=1)
    path = _write_jsonl(tmp_path / "docs.jsonl", docs, text="content", group="source")
    out = tmp_path / "out"
    code, stdout, stderr = _run(
        ["report", "--input", str(path), "--text-column", "content",
         "--group-column", "source", "--out", str(out), *REPORT_ARGS]
    )
    assert code == 0, stderr
    assert "JSON lines" in stdout
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "Money Times" in page and "content" in page
    _check_pngs(out)
    assert joblib.load(out / "model.joblib")[-1].collection_topic_.shape == (3, 3)


def test_load_documents_folder_and_json_array(tmp_path):
    docs = _make_documents(n_per_collection=4)
    root = _write_folder(tmp_path / "corpus", docs)
    (root / "Daily Sport" / "empty.txt").write_text("  \n", encoding="utf-8")
    (root / "Daily Sport" / "nested").mkdir()
    (root / "Daily Sport" / "nested" / "more.TXT").write_text("goal goal", encoding="utf-8")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "x.txt").write_text("ignored", encoding="utf-8")
    loaded = load_documents(root)
    assert loaded.format == "folder of .txt files"
    assert len(loaded.texts) == 13 and loaded.n_skipped == 1
    assert sorted(set(loaded.groups)) == ["Daily Sport", "Lab & Sky", "Money Times"]
    assert loaded.groups.count("Daily Sport") == 5
    assert "goal goal" in loaded.texts
    assert "empty" in loaded.notes[0]

    array = tmp_path / "docs.json"
    array.write_text(json.dumps([{"text": t, "group": g} for t, g in docs]), encoding="utf-8")
    loaded = load_documents(array)
    assert loaded.texts == [t for t, _ in docs] and loaded.groups == [g for _, g in docs]


def test_folder_report(tmp_path):
    root = _write_folder(tmp_path / "corpus", _make_documents(n_per_collection=10))
    out = tmp_path / "out"
    code, stdout, stderr = _run(["report", "--input", str(root), "--out", str(out),
                                 "--title", "My corpus", *REPORT_ARGS, "--no-figures"])
    assert code == 0, stderr
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "<h1>My corpus</h1>" in page
    assert "Lab &amp; Sky" in page
    assert (out / "model.joblib").is_file()


# ---------------------------------------------------------------------------
# Bad input: one clear line on stderr, exit status 2, no traceback
# ---------------------------------------------------------------------------


def _bad_inputs(tmp):
    docs = _make_documents(n_per_collection=5)
    good = _write_csv(tmp / "good.csv", docs)
    cases = {}

    def case(name, argv, *messages):
        cases[name] = (argv, messages)

    case("missing file", ["--input", str(tmp / "nope.csv")],
         "no such file or folder", "nope.csv")
    (tmp / "docs.xlsx").write_bytes(b"PK\x03\x04")
    case("unsupported extension", ["--input", str(tmp / "docs.xlsx")],
         "unsupported file type '.xlsx'", ".csv")
    case("missing text column", ["--input", str(good), "--text-column", "txt",
                                 "--group-column", "outlet"],
         "no column 'txt'", "'id', 'body', 'outlet'")
    case("missing group column", ["--input", str(good), "--text-column", "body"],
         "no column 'group'", "--group-column", "'id', 'body', 'outlet'")
    _write_csv(tmp / "semicolon.csv", [])
    (tmp / "semicolon.csv").write_text("body;outlet\nsome text;a\n", encoding="utf-8")
    case("semicolon-separated", ["--input", str(tmp / "semicolon.csv"),
                                 "--text-column", "body"],
         "no column 'body'", "semicolons")
    _write_csv(tmp / "blank.csv", [(" ", "a"), ("", "b"), ("\t", "a")])
    case("only empty texts", ["--input", str(tmp / "blank.csv"), "--text-column", "body",
                              "--group-column", "outlet"],
         "no document with text", "all 3")
    _write_csv(tmp / "one.csv", [("a single document about goals", "a")])
    case("one document", ["--input", str(tmp / "one.csv"), "--text-column", "body",
                          "--group-column", "outlet"],
         "only 1 document", "at least 2")
    (tmp / "empty.csv").write_bytes(b"")
    case("empty file", ["--input", str(tmp / "empty.csv")], "empty.csv is empty")
    (tmp / "latin1.csv").write_bytes(
        "body,outlet\ncaf\u00e9 cr\u00e8me br\u00fbl\u00e9e,a\nna\u00efve,b\n".encode("latin-1")
    )
    case("latin-1 CSV", ["--input", str(tmp / "latin1.csv"), "--text-column", "body",
                         "--group-column", "outlet"],
         "latin1.csv is not UTF-8", "re-encode")
    bad_folder = _write_folder(tmp / "corpus", docs)
    (bad_folder / "Money Times" / "odd.txt").write_bytes("\u00e9t\u00e9".encode("cp1252"))
    case("latin-1 txt in a folder", ["--input", str(bad_folder)],
         "odd.txt is not UTF-8", "re-encode")
    (tmp / "flat").mkdir()
    (tmp / "flat" / "a.txt").write_text("loose file", encoding="utf-8")
    case("folder without collections", ["--input", str(tmp / "flat")],
         "no .txt files in sub-folders", "one sub-folder per collection")
    (tmp / "broken.jsonl").write_text('{"text": "a b", "group": "x"}\n{"text": oops}\n',
                                      encoding="utf-8")
    case("invalid JSON line", ["--input", str(tmp / "broken.jsonl")],
         "broken.jsonl, line 2: not valid JSON")
    (tmp / "fields.jsonl").write_text('{"body": "a b", "group": "x"}\n', encoding="utf-8")
    case("missing JSON field", ["--input", str(tmp / "fields.jsonl")],
         "no field 'text'", "'body', 'group'")
    _write_csv(tmp / "stop.csv", [("the and of it is", "a"), ("was were the a an", "b"),
                                  ("it is what it is", "a")])
    case("only stop words", ["--input", str(tmp / "stop.csv"), "--text-column", "body",
                             "--group-column", "outlet", "--min-df", "1"],
         "vocabulary is empty", "stop words", "--stop-words none")
    case("min-df too high", ["--input", str(good), "--text-column", "body",
                             "--group-column", "outlet", "--min-df", "1000",
                             "--max-df", "100000"],
         "no word is left", "--min-df 1000")
    case("min-df above max-df", ["--input", str(good), "--text-column", "body",
                                 "--group-column", "outlet", "--min-df", "0.9",
                                 "--max-df", "0.5"],
         "at least 13.5 and at most 7.5 of the 15 documents", "lower --min-df")
    case("n-components 0", ["--input", str(good), "--n-components", "0"],
         "--n-components must be in [1, 10,000]; this command writes out every topic "
         "(fit more topics with sklearn_clda.CompoundLDA in Python), got 0")
    case("n-components too many", ["--input", str(good), "-k", "99999999999"],
         "--n-components must be in [1, 10,000]; this command writes out every topic "
         "(fit more topics with sklearn_clda.CompoundLDA in Python), got 99999999999")
    case("max-df out of range", ["--input", str(good), "--max-df", "1.5"],
         "--max-df must be")
    (tmp / "taken").write_text("a file", encoding="utf-8")
    case("output is a file", ["--input", str(good), "--text-column", "body",
                              "--group-column", "outlet", "--out", str(tmp / "taken")],
         "existing file", "taken")
    case("output inside a file", ["--input", str(good), "--out", str(tmp / "taken" / "sub")],
         "cannot create the output folder", "is a file")
    case("same column twice", ["--input", str(good), "--text-column", "body",
                               "--group-column", "body"],
         "both name 'body'")
    (tmp / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    case("deeply nested JSON", ["--input", str(tmp / "deep.json")],
         "deep.json: the JSON is nested too deeply")
    (tmp / "deep.jsonl").write_text('{"text": "a b", "group": "x"}\n'
                                    + '{"text": ' * 100_000 + "\n", encoding="utf-8")
    case("deeply nested JSON line", ["--input", str(tmp / "deep.jsonl")],
         "deep.jsonl, line 2: the JSON is nested too deeply")
    case("negative seed", ["--input", str(good), "--seed", "-1"],
         "--seed must be an integer in [0, 4294967295], got -1")
    case("seed too large", ["--input", str(good), "--seed", "1099511627776"],
         "--seed must be an integer in [0, 4294967295], got 1099511627776")
    case("empty output path", ["--input", str(good), "--out", ""], "--out is empty")
    (tmp / "gone").symlink_to(tmp / "no-such-folder")
    case("output folder a dangling link", ["--input", str(good), "--out", str(tmp / "gone")],
         "is a symbolic link to a missing folder")
    case("negative time budget", ["--input", str(good), "--time-budget", "-5"],
         "--time-budget must be a number of seconds >= 0, got -5.0")
    case("time budget not a number", ["--input", str(good), "--time-budget", "nan"],
         "--time-budget must be a number of seconds >= 0, got nan")
    (tmp / "holder").mkdir()
    (tmp / "holder" / "model.npz").mkdir()
    case("output file a folder", ["--input", str(good), "--out", str(tmp / "holder")],
         "model.npz exists and is not a file")
    # (Before Python 3.14 the check that the folder exists raises, from 3.14
    # on its creation fails: "cannot use" or "cannot create the output folder".)
    case("output name too long", ["--input", str(good), "--out", str(tmp / ("y" * 300))],
         "the output folder", "File name too long")
    case("input name too long", ["--input", str(tmp / ("y" * 300 + ".csv"))],
         "cannot read", "File name too long")
    rows = "".join(f'{{"text": "a b c", "group": "x", "id": 1{"0" * 5000}}}\n' for _ in range(3))
    (tmp / "bignum.jsonl").write_text(rows, encoding="utf-8")
    # Python's words: "limit (4300 digits)", on 3.10 "limit (4300)".
    case("JSON integer too long", ["--input", str(tmp / "bignum.jsonl")],
         "bignum.jsonl, line 1: cannot read the JSON", "limit (4300")
    (tmp / "corpus" / "a").mkdir(parents=True)
    case("output inside the input folder", ["--input", str(tmp / "corpus"),
                                            "--out", str(tmp / "corpus" / "report")],
         "is inside the --input folder", "write the report elsewhere")
    case("output is the input folder", ["--input", str(tmp / "corpus"),
                                        "--out", str(tmp / "corpus")],
         "is inside the --input folder")
    (tmp / "old_report").mkdir()
    (tmp / "old_report" / "topics.csv").write_text(good.read_text(encoding="utf-8"),
                                                   encoding="utf-8")
    case("empty input path", ["--input", ""], "--input is empty; name a file or folder")
    (tmp / "utf16.csv").write_text("body,outlet\nsome text,a\n", encoding="utf-16")
    case("UTF-16 CSV", ["--input", str(tmp / "utf16.csv")],
         "utf16.csv is not UTF-8 text (byte 0xff)", "iconv -f utf-16 -t utf-8")
    case("input is a report file of the output", [
        "--input", str(tmp / "old_report" / "topics.csv"), "--text-column", "body",
        "--group-column", "outlet", "--out", str(tmp / "old_report")],
         "is the file topics.csv of the --out folder", "would overwrite your documents")
    _write_csv(tmp / "nul.csv", [("goals and matches", "sport"), ("rates and bonds", "mon\x00ey")])
    case("NUL in a collection label", ["--input", str(tmp / "nul.csv"), "--text-column", "body",
                                       "--group-column", "outlet"],
         "nul.csv, line 3: the collection label 'mon\\x00ey' holds a NUL character")
    return cases


_BAD_CASE_NAMES = [
    "missing file", "unsupported extension", "missing text column",
    "missing group column", "semicolon-separated", "only empty texts", "one document",
    "empty file", "latin-1 CSV", "latin-1 txt in a folder", "folder without collections",
    "invalid JSON line", "missing JSON field", "only stop words", "min-df too high",
    "min-df above max-df",
    "n-components 0", "max-df out of range", "output is a file", "output inside a file",
    "same column twice", "deeply nested JSON", "deeply nested JSON line", "negative seed",
    "seed too large", "empty output path", "output folder a dangling link",
    "output file a folder", "negative time budget", "time budget not a number",
    "n-components too many", "output name too long", "input name too long",
    "JSON integer too long", "output inside the input folder", "output is the input folder",
    "input is a report file of the output", "empty input path", "UTF-16 CSV",
    "NUL in a collection label",
]


@pytest.fixture(scope="module")
def bad_inputs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bad")
    return tmp, _bad_inputs(tmp)


@pytest.mark.parametrize("name", _BAD_CASE_NAMES)
def test_bad_input_exits_2_with_one_line(name, bad_inputs, capsys, monkeypatch):
    tmp, cases = bad_inputs
    argv, messages = cases[name]
    if "--out" not in argv:
        argv = argv + ["--out", str(tmp / "out")]
    cwd = tmp / "cwd"
    cwd.mkdir(exist_ok=True)
    monkeypatch.chdir(cwd)  # --out "" must not write here
    code = main(["report", *argv, "--no-progress"])
    assert list(cwd.iterdir()) == []
    assert not (tmp / "no-such-folder").exists()
    captured = capsys.readouterr()
    assert code == 2
    assert "Traceback" not in captured.err
    errors = [line for line in captured.err.splitlines() if "error:" in line]
    assert len(errors) == 1, captured.err
    assert errors[0].startswith("python -m sklearn_clda report: error: ")
    for message in messages:
        assert message in errors[0]
    assert not (tmp / "out" / "index.html").exists()


def test_all_bad_cases_are_tested(bad_inputs):
    assert sorted(bad_inputs[1]) == sorted(_BAD_CASE_NAMES)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--stop-words", "french"], "invalid choice: 'french'"),
        (["--min-df", "two"], "expected a number of documents"),
        (["-k", "x"], "invalid int value"),
        (["--themes", "some"], "expected a number of themes or auto, got 'some'"),
    ],
)
def test_bad_option_values_exit_2(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", "--input", "docs.csv", "--out", str(tmp_path), *argv])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--themes", "1"], "--themes must be 0 (none), auto or from 2 to the number of topics "
     "minus one (19), got 1"),
    (["-k", "5", "--themes", "5"], "minus one (4), got 5"),
])
def test_report_command_refuses_bad_theme_counts(argv, message, tmp_path, capsys):
    source = tmp_path / "docs.csv"
    source.write_text("text,group\nsome words here,a\nmore words there,b\n", encoding="utf-8")
    code = main(["report", "--input", str(source), "--out", str(tmp_path / "r"), *argv])
    assert code == 2
    assert message in capsys.readouterr().err and not (tmp_path / "r").exists()


def test_missing_required_options_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--input" in err and "--out" in err


def test_bad_input_exit_status_as_a_process(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    proc = subprocess.run(
        [sys.executable, "-m", "sklearn_clda", "report", "--input",
         str(tmp_path / "missing.csv"), "--out", str(tmp_path / "out")],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"python -m sklearn_clda report: error: no such file or folder: "
        f"{tmp_path / 'missing.csv'}"
    ]


def test_load_documents_errors_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_documents(tmp_path / "x.csv")
    assert issubclass(InputError, ValueError)


def test_json_lines_split_at_line_ends_only(tmp_path):
    # json.dumps(ensure_ascii=False) leaves U+2028, U+2029 and U+0085 raw.
    rows = [{"text": f"one{sep}two {i}", "group": "a"}
            for i, sep in enumerate(["\u2028", "\u2029", "\x85"])]
    lines = [json.dumps(row, ensure_ascii=False) for row in rows]
    path = tmp_path / "docs.jsonl"
    path.write_text("\r\n".join(lines) + "\n", encoding="utf-8")
    docs = load_documents(path)
    assert docs.texts == [row["text"] for row in rows]
    path.write_text("\n".join(lines + ['{"text": "x", "group": '] + lines) + "\n",
                    encoding="utf-8")
    with pytest.raises(InputError, match="docs.jsonl, line 4: not valid JSON"):
        load_documents(path)


def test_a_pretty_printed_json_object_is_named_as_such(tmp_path):
    path = tmp_path / "docs.json"
    path.write_text(json.dumps({"text": "a b", "group": "x"}, indent=2), encoding="utf-8")
    with pytest.raises(InputError, match="holds a single JSON object spread over several "
                                         "lines; give one JSON object per line"):
        load_documents(path)


@pytest.mark.parametrize("kind, sep", [("tsv", "\t"), ("csv", ",")])
def test_an_unmatched_quote_is_named_not_swallowing_rows(tmp_path, kind, sep):
    rows = [f"words of document {i}{sep}{'ab'[i % 2]}" for i in range(8)]
    rows[3] = '"' + rows[3]  # opens a quoted cell that never closes
    path = tmp_path / f"docs.{kind}"
    path.write_text(f"text{sep}group\n" + "\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=f"docs.{kind}, line 5: a cell opened with a "
                                         "double quote runs to line 9"):
        load_documents(path)
    # A quoted cell over several lines, its row complete, is a document.
    rows[3] = '"words\nover\nlines"' + sep + "a"
    path.write_text(f"text{sep}group\n" + "\n".join(rows) + "\n", encoding="utf-8")
    docs = load_documents(path)
    assert len(docs.texts) == 8 and docs.texts[3] == "words\nover\nlines"


def test_nul_characters_are_mended_in_texts_and_refused_in_labels(tmp_path):
    """A NUL in a text would reach the report's page (which drops it) and its
    CSV files (which other tools' readers refuse or cut at it); in a label
    the estimator refuses it, which ended the command with a traceback after
    reading the input."""
    path = tmp_path / "docs.csv"
    path.write_text("text,group\na\x00b c,x\nd e,y\nf\x00\x00,x\n", encoding="utf-8")
    docs = load_documents(path)
    assert docs.texts == ["a\ufffdb c", "d e", "f\ufffd\ufffd"]
    assert docs.notes == ["replaced NUL characters by U+FFFD in 2 document(s) (line 2, line 4)"]
    lines = tmp_path / "docs.jsonl"  # JSON's escape
    lines.write_text('{"text": "a b", "group": "x\\u0000"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="docs.jsonl, line 1: the collection label "
                                         "'x\\\\x00' holds a NUL character"):
        load_documents(lines)


def test_lone_surrogates_are_mended_in_texts_and_refused_in_labels(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text('{"text": "a \\ud800 b", "group": "x"}\n{"text": "c d", "group": "y"}\n',
                    encoding="utf-8")
    docs = load_documents(path)
    assert docs.texts[0] == "a \ufffd b"
    assert docs.notes == ["replaced lone surrogates (code points that are no characters) "
                          "by U+FFFD in 1 document(s) (line 1)"]
    path.write_text('{"text": "a b", "group": "fr\\udc80uit"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="line 1: the collection label 'fr\\\\udc80uit' "
                                         "holds a code point that is no character"):
        load_documents(path)
    # The report's own files take them (a title from a command line, say).
    files_module.write_text(tmp_path, "t.txt", "T\udcff")
    assert (tmp_path / "t.txt").read_text(encoding="utf-8") == "T\ufffd"


@pytest.fixture(scope="module")
def tiny_clda():
    from sklearn_clda.datasets import make_compound_corpus

    corpus = make_compound_corpus(n_topics=3, n_features=20, n_collections=2,
                                  docs_per_collection=15, doc_length=20, random_state=0)
    model = CompoundLDA(n_components=3, max_iter=20, thin=1, random_state=0)
    return model.fit(corpus.data, groups=corpus.groups), corpus


@pytest.mark.parametrize("params, name", [
    ({"top_words": 0}, "top_words"), ({"top_words": "10"}, "top_words"),
    ({"top_words": True}, "top_words"), ({"n_distinctive": -1}, "n_distinctive"),
    ({"interval": 0.0}, "interval"), ({"interval": 1.5}, "interval"),
    ({"dpi": 0}, "dpi"), ({"title": 5}, "title"), ({"fit_seconds": -1.0}, "fit_seconds"),
    ({"fit_seconds": float("nan")}, "fit_seconds"), ({"settings": ["a"]}, "settings"),
    ({"texts_info": "csv"}, "texts_info"), ({"model_note": 3}, "model_note"),
    ({"extension": 1}, "extension"), ({"pipeline": "p"}, "pipeline"),
])
def test_write_report_names_a_bad_option_and_writes_nothing(tiny_clda, tmp_path, params, name):
    """Before validation these were taken (top_words=0, n_distinctive=-1,
    interval=0, title=5, fit_seconds=-1 wrote a page) or failed deep inside
    (int("10"), numpy's quantile range, iterating 5)."""
    model, corpus = tiny_clda
    words = [f"w{i}" for i in range(20)]
    with pytest.raises(ValueError, match=f"The '{name}' parameter of write_report"):
        write_report(model, corpus.data, words, tmp_path / "out", groups=corpus.groups,
                     **params)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("params, name", [
    ({"min_ess": 0}, "min_ess"), ({"min_ess": -5.0}, "min_ess"),
    ({"time_budget": -1.0}, "time_budget"), ({"time_budget": float("inf")}, "time_budget"),
    ({"time_budget": float("nan")}, "time_budget"), ({"time_budget": "30"}, "time_budget"),
])
def test_extend_chain_names_a_bad_option(tiny_clda, params, name):
    from sklearn_clda.report import extend_chain

    model, corpus = tiny_clda
    n_iter = model.n_iter_
    with pytest.raises(ValueError, match=f"The '{name}' parameter of extend_chain"):
        extend_chain(model, corpus.data, corpus.groups, **params)
    assert model.n_iter_ == n_iter


def test_extend_chain_needs_a_fitted_compound_lda(tiny_clda):
    """Not an AttributeError deep inside, as before."""
    from sklearn.exceptions import NotFittedError

    from sklearn_clda import LDAGibbs
    from sklearn_clda.report import extend_chain

    _, corpus = tiny_clda
    with pytest.raises(NotFittedError):
        extend_chain(CompoundLDA(3), corpus.data, corpus.groups)
    with pytest.raises(ValueError, match="extend_chain needs a fitted CompoundLDA.*LDAGibbs"):
        extend_chain(LDAGibbs(3, max_iter=4).fit(corpus.data), corpus.data)


def test_load_documents_and_output_problem_name_a_bad_argument(tmp_path):
    from sklearn_clda.report import output_problem

    with pytest.raises(ValueError, match="The 'path' parameter of load_documents"):
        load_documents(5)
    with pytest.raises(ValueError, match="The 'group_column' parameter of load_documents"):
        load_documents(tmp_path / "x.csv", group_column=None)
    with pytest.raises(ValueError, match="The 'out' parameter of output_problem"):
        output_problem(None)


@pytest.mark.skipif(not Path("/proc/self").is_dir() or not Path("/sys/kernel").is_dir(),
                    reason="needs Linux's /proc and /sys")
@pytest.mark.parametrize("out", ["/proc/sklearn-clda-report", "/proc/a/b/report", "/sys/kernel",
                                 "/proc/self"])
def test_output_problem_tries_the_folder_not_only_its_permission_bits(out):
    # As root (CI, containers), os.access says yes to /proc and /sys; the
    # report would fail only after the fit.
    from sklearn_clda.report import output_problem

    problem = output_problem(out)
    assert problem is not None and problem.startswith(("cannot create", "cannot write")), problem
    assert out in problem


def test_output_problem_leaves_no_trace(tmp_path):
    from sklearn_clda.report import output_problem

    assert output_problem(tmp_path / "a" / "b" / "report") is None
    assert output_problem(tmp_path) is None
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------
# Help and the news16 demo
# ---------------------------------------------------------------------------


def test_report_help_documents_every_option(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for option in ["--input", "--text-column", "--group-column", "--n-components",
                   "--max-iter", "--seed", "--stop-words", "--min-df", "--max-df",
                   "--top-words", "--no-progress", "--out", "--title", ".jsonl", "--chains",
                   "--themes", "--covariate-column", "exit status"]:
        assert option in out, option


def test_main_help_mentions_report(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "report" in out and "--report DIR" in out


TIMING = re.compile(r"sweeps in [\d.]+ s \([\d.]+M tokens/s\)")


def test_demo_report(tmp_path):
    demo = ["-k", "3", "-n", "10", "--no-progress", "--seed", "0"]
    code, out, err = _run(demo + ["--report", str(tmp_path / "news"), "--time-budget", "0"])
    assert code == 0, err
    code_plain, out_plain, _ = _run(demo)
    assert code_plain == 0
    # The same fit and table as without --report, then the report's path.
    assert TIMING.search(out)
    assert TIMING.sub("", out).startswith(TIMING.sub("", out_plain))
    assert "Report:" in out

    folder = tmp_path / "news"
    page = (folder / "index.html").read_text(encoding="utf-8")
    for label in ["comp", "politics", "rec", "sci", "16-newsgroups", "model alone"]:
        assert label in page
    _check_pngs(folder, FIGURES[:4])  # 10 sweeps keep 1 draw: no pi traces
    assert "too few" in page
    summary = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert summary["n_documents"] == 10764 and summary["vocabulary_size"] == 9208
    # FREX labels, and the most probable words beside them where they differ.
    flat = " ".join(page.split())
    differ = [t for t in summary["topics"] if t["label_words"] != t["top_words"]]
    assert differ
    for topic in differ:
        assert "most probable: " + " ".join(topic["top_words"]) in flat
    assert summary["model_file_contents"] == "CompoundLDA"

    from sklearn_clda.datasets import load_news16

    news = load_news16()
    clda = joblib.load(folder / "model.joblib")
    assert isinstance(clda, CompoundLDA)
    theta = clda.transform(news.data[:4], groups=news.groups[:4])
    assert theta.shape == (4, 3)
    safe = load_model(folder / "model.npz")
    np.testing.assert_array_equal(safe.transform(news.data[:4], groups=news.groups[:4]),
                                  theta)
    page_code = _safe_code(page)
    assert 'load_model("model.npz")' in page_code and "joblib" not in page_code
    assert (folder / "vocabulary.txt").read_text(encoding="utf-8").splitlines() == list(
        news.feature_names)
    np.testing.assert_allclose(summary["collection_topic"]["mean"], safe.collection_topic_)
    assert summary["collection_topic"]["collections"] == ["comp", "politics", "rec", "sci"]


def test_demo_report_path_is_a_file(tmp_path, capsys):
    (tmp_path / "f").write_text("x", encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        main(["-k", "3", "-n", "10", "--no-progress", "--report", str(tmp_path / "f")])
    assert exc.value.code == 2
    assert "existing file" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# Output files: no writing through symbolic links, atomic replacement
# ---------------------------------------------------------------------------

OUTPUT_NAMES = ["index.html", "report.json", "model.joblib", "model.npz",
                "vocabulary.txt", "collection_topics_heatmap.png", "pi_trace.png"]


def _planted_link(tmp_path, name, dangling):
    """An output folder whose file ``name`` is a link to a file outside it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim"
    if not dangling:
        victim.write_text("precious", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / name).symlink_to(victim)
    return out, victim


def _outside_untouched(victim, dangling):
    if dangling:
        assert not victim.exists()  # a dangling link's target is not created
    else:
        assert victim.read_text(encoding="utf-8") == "precious"


@pytest.mark.parametrize("dangling", [False, True], ids=["link", "dangling"])
@pytest.mark.parametrize("name", OUTPUT_NAMES)
def test_report_refuses_symlinked_output_files(name, dangling, tmp_path, bad_inputs):
    out, victim = _planted_link(tmp_path, name, dangling)
    good = bad_inputs[0] / "good.csv"
    code, _, err = _run(["report", "--input", str(good), "--text-column", "body",
                         "--group-column", "outlet", "--out", str(out), "-n", "4",
                         "--no-progress"])
    assert code == 2
    assert err.strip().splitlines() == [
        f"python -m sklearn_clda report: error: {out / name} is a symbolic link; the "
        "report does not write through links (it could overwrite a file outside the "
        "output folder): remove the link or choose another output folder"
    ]
    _outside_untouched(victim, dangling)
    assert sorted(p.name for p in out.iterdir()) == [name]  # nothing else written


@pytest.mark.parametrize("dangling", [False, True], ids=["link", "dangling"])
@pytest.mark.parametrize("name", ["index.html", "model.joblib", "model.npz"])
def test_write_report_refuses_symlinked_output_files(name, dangling, csv_report, tmp_path):
    out, victim = _planted_link(tmp_path, name, dangling)
    pipe = joblib.load(csv_report["out"] / "model.joblib")
    X = pipe[:-1].transform([t for t, _ in csv_report["docs"]])
    with pytest.raises(InputError, match="is a symbolic link"):
        write_report(pipe, X, pipe[:-1].get_feature_names_out(), out)
    _outside_untouched(victim, dangling)
    assert sorted(p.name for p in out.iterdir()) == [name]


def test_a_link_made_after_the_check_is_replaced_not_followed(tmp_path, monkeypatch):
    out, victim = _planted_link(tmp_path, "index.html", dangling=False)
    # As if the link appeared between the check and the write:
    monkeypatch.setattr(files_module.Path, "is_symlink", lambda self: False)
    files_module.write_text(out, "index.html", "<p>new</p>")
    assert victim.read_text(encoding="utf-8") == "precious"
    assert not (out / "index.html").is_symlink()
    assert (out / "index.html").read_text(encoding="utf-8") == "<p>new</p>"


def test_a_failed_write_keeps_the_old_file(tmp_path):
    (tmp_path / "report.json").write_text("old", encoding="utf-8")

    def fail(fh):
        fh.write(b"half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        files_module.write_file(tmp_path, "report.json", fail)
    assert (tmp_path / "report.json").read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temporary file


def _folder_bytes(out):
    return {p.name: p.read_bytes() for p in out.iterdir()}


def test_a_report_that_fails_midway_leaves_the_old_one(tiny_clda, tmp_path, monkeypatch):
    from sklearn_clda.report import _write

    model, corpus = tiny_clda
    words = [f"w{i}" for i in range(20)]
    out = tmp_path / "out"
    write_report(model, corpus.data, words, out, groups=corpus.groups)
    before = _folder_bytes(out)

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    # The figures (other ones: another dpi) are written by then; the tables fail.
    monkeypatch.setattr(_write, "write_tables", fail)
    with pytest.raises(OSError, match="No space"):
        write_report(model, corpus.data, words, out, groups=corpus.groups, dpi=50)
    assert _folder_bytes(out) == before  # nothing staged is left, nothing replaced


def test_an_interrupted_move_leaves_no_page(tiny_clda, tmp_path, monkeypatch):
    model, corpus = tiny_clda
    words = [f"w{i}" for i in range(20)]
    out = tmp_path / "out"
    write_report(model, corpus.data, words, out, groups=corpus.groups)
    moves = []

    def replace(src, dst):
        if Path(dst).parent == out:  # a move into place (not a staged write)
            moves.append(Path(dst).name)
            if len(moves) == 3:
                raise KeyboardInterrupt
        os.rename(src, dst)

    monkeypatch.setattr(files_module.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        write_report(model, corpus.data, words, out, groups=corpus.groups, title="New")
    names = {p.name for p in out.iterdir()}
    # The old page and summary went first: no index.html over a mixed folder.
    assert "index.html" not in names and "report.json" not in names
    assert moves[:3] == sorted(moves[:3]) and "index.html" not in moves
    assert not [name for name in names if name.endswith(".part")]


def test_a_new_report_drops_the_old_ones_files_only(tiny_clda, tmp_path):
    model, corpus = tiny_clda
    words = [f"w{i}" for i in range(20)]
    out = tmp_path / "out"
    out.mkdir()
    # An old report's trend figure (this model's labels 0, 1 are ordered,
    # so the figure is redrawn: use one the new report lacks), the select
    # command's table and the user's own file.
    (out / "document_topics.csv").write_text("stale", encoding="utf-8")
    (out / "select_n_components.csv").write_text("select", encoding="utf-8")
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    X = corpus.data[:-1]  # not the fitted documents: no document_topics.csv
    write_report(model, X, words, out, groups=corpus.groups[:-1])
    names = {p.name for p in out.iterdir()}
    assert "document_topics.csv" not in names
    assert (out / "select_n_components.csv").read_text(encoding="utf-8") == "select"
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert "index.html" in names


def test_a_collection_without_words_gets_a_report(tmp_path):
    # Its documents lost every word to the vocabulary (min_df): no
    # representative document, but the rest of the report.
    import scipy.sparse as sp

    from sklearn_clda.datasets import make_compound_corpus

    corpus = make_compound_corpus(n_topics=3, n_features=20, n_collections=2,
                                  docs_per_collection=15, doc_length=20, random_state=0)
    X = sp.vstack([corpus.data, sp.csr_matrix((2, 20), dtype=corpus.data.dtype)]).tocsr()
    groups = np.r_[corpus.groups.astype(str), ["empty", "empty"]]
    model = CompoundLDA(n_components=3, max_iter=20, thin=1, random_state=0)
    model.fit(X, groups=groups)
    summary = write_report(model, X, [f"w{i}" for i in range(20)], tmp_path / "r",
                           groups=groups, figures=False)
    empty = next(entry for entry in summary["distinctive"] if entry["collection"] == "empty")
    assert empty["topics"] and all(row["documents"] == [] for row in empty["topics"])
    others = [entry for entry in summary["distinctive"] if entry["collection"] != "empty"]
    assert any(row["documents"] for entry in others for row in entry["topics"])
    assert (tmp_path / "r" / "index.html").is_file()


def test_the_documents_that_read_like_another_collection(tmp_path, monkeypatch):
    """Per collection, its documents whose own collection's probability is
    below 0.1, the clearest first, and document_collections.csv, from
    document_collections seeded with 0; left out with the reason past the
    report's work limit."""
    from sklearn_clda.inspection import document_collections
    from sklearn_clda.report import _reads_like

    # two money stories in Daily Sport
    docs = _make_documents() + [(" ".join(THEMES["money"]), "Daily Sport")] * 2
    vectorizer = CountVectorizer()
    X = vectorizer.fit_transform([t for t, _ in docs])
    groups, names = [g for _, g in docs], vectorizer.get_feature_names_out()
    model = CompoundLDA(n_components=3, max_iter=40, thin=2, random_state=0)
    model.fit(X, groups=groups)
    summary = write_report(model, X, names, tmp_path / "r", groups=groups, figures=False)
    expected = document_collections(model, X, groups, random_state=0)
    found = summary["reads_like"]
    assert found["omitted"] is None and found["below"] == 0.1
    for label, entry in found["collections"].items():
        mine = expected[(expected.collection == label) & (expected.own < 0.1)]
        assert entry["n"] == len(mine)
        assert entry["of"] == int((expected.collection == label).sum())
        rows = mine.sort_values("probability", ascending=False, kind="stable").index[:3]
        assert [doc["row"] for doc in entry["documents"]] == rows.tolist()
        for doc in entry["documents"]:
            assert doc["reads_like"] == expected.most_likely[doc["row"]] != label
            assert doc["own"] == pytest.approx(expected.own[doc["row"]])
    sport = found["collections"]["Daily Sport"]["documents"]
    assert {doc["row"] for doc in sport} >= {len(docs) - 2, len(docs) - 1}
    assert {doc["reads_like"] for doc in sport} == {"Money Times"}
    with open(tmp_path / "r" / "document_collections.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == X.shape[0]
    np.testing.assert_allclose([float(row["own"]) for row in rows], expected.own, rtol=1e-12)
    page = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert "read like another" in page

    # the threshold is the module's: almost every document is below 0.9999
    monkeypatch.setattr(_reads_like, "BELOW", 0.9999)
    found = write_report(model, X, names, tmp_path / "high", groups=groups,
                         figures=False)["reads_like"]
    assert found["below"] == 0.9999
    assert [entry["n"] for entry in found["collections"].values()] == [
        int(((expected.collection == label) & (expected.own < 0.9999)).sum())
        for label in found["collections"]]

    monkeypatch.setattr(_reads_like, "MAX_COLLECTIONS", 2)
    summary = write_report(model, X, names, tmp_path / "many", groups=groups, figures=False)
    assert summary["reads_like"]["omitted"].startswith("3 collections (the report estimates it")
    monkeypatch.setattr(_reads_like, "MAX_COLLECTIONS", 40)

    monkeypatch.setattr(_reads_like, "MAX_WORK", 10)
    summary = write_report(model, X, names, tmp_path / "past", groups=groups, figures=False)
    assert "past the report's 10 token-topics" in summary["reads_like"]["omitted"]
    assert "reads_like" not in summary["downloads"]
    page = " ".join((tmp_path / "past" / "index.html").read_text(encoding="utf-8").split())
    assert "Which collection each document reads like was not estimated" in page


def test_two_collections_get_their_distance_but_no_closest(tmp_path):
    from sklearn_clda.datasets import make_compound_corpus
    from sklearn_clda.inspection import collection_distances

    corpus = make_compound_corpus(n_topics=3, n_features=20, n_collections=2,
                                  docs_per_collection=15, doc_length=20, random_state=0)
    model = CompoundLDA(n_components=3, max_iter=20, thin=1, random_state=0)
    model.fit(corpus.data, groups=corpus.groups)
    summary = write_report(model, corpus.data, [f"w{i}" for i in range(20)], tmp_path / "r",
                           groups=corpus.groups, figures=False)
    (pair,) = summary["collection_distances"]["pairs"]
    assert pair["distance"] == pytest.approx(collection_distances(model)["distance"][0])
    assert {c["closest"] for c in summary["collections"]} == {None}
    assert (tmp_path / "r" / "collection_distances.csv").is_file()
    assert "Closest collection" not in (tmp_path / "r" / "index.html").read_text("utf-8")


@pytest.mark.parametrize("n_docs, cap, why", [
    (2, None, "it needs at least 3 documents, and there are 2"),
    (30, 2, "the report correlates at most 2 topics, and there are 3"),
])
def test_topic_correlations_are_left_out_with_the_reason(tmp_path, monkeypatch, n_docs,
                                                         cap, why):
    from sklearn_clda.datasets import make_compound_corpus
    from sklearn_clda.report import _analysis

    if cap is not None:
        monkeypatch.setattr(_analysis, "MAX_CORRELATED_TOPICS", cap)
    corpus = make_compound_corpus(n_topics=3, n_features=20, n_collections=2,
                                  docs_per_collection=15, doc_length=20, random_state=0)
    X, groups = corpus.data[:n_docs], corpus.groups[:n_docs]
    model = CompoundLDA(n_components=3, max_iter=20, thin=1, random_state=0)
    model.fit(X, groups=groups)
    out = tmp_path / "r"
    summary = write_report(model, X, [f"w{i}" for i in range(20)], out, groups=groups)
    assert summary["topic_pairs"] == {"omitted": why}
    assert not (out / "topic_correlations.csv").exists()
    assert not (out / "topic_correlations.png").exists()
    page = (out / "index.html").read_text(encoding="utf-8")
    assert f"is not shown:\n{why}." in page


def test_bootstrap_draws_fit_in_their_memory():
    from sklearn_clda.report import _analysis

    assert _analysis.bootstrap_draws(24, 100) == _analysis.BOOTSTRAP_DRAWS
    assert 8 * 400**2 * _analysis.bootstrap_draws(24, 400) <= _analysis.BOOTSTRAP_BYTES
    assert _analysis.bootstrap_draws(24, 1000) == 0  # fewer than the minimum worth taking


def _report_on_labels(out, labels):
    """A report in ``out`` on a small corpus whose collections (15 documents
    each) carry ``labels``; returns the path of its page."""
    from sklearn_clda.datasets import make_compound_corpus

    corpus = make_compound_corpus(n_topics=3, n_features=20, n_collections=len(labels),
                                  docs_per_collection=15, doc_length=20, random_state=0)
    groups = np.array(labels)[corpus.groups]
    model = CompoundLDA(n_components=3, max_iter=20, thin=1, random_state=0)
    model.fit(corpus.data, groups=groups)
    write_report(model, corpus.data, [f"w{i}" for i in range(20)], out, groups=groups)
    return out / "index.html"


def test_a_right_to_left_override_in_a_label_stays_inside_it(tmp_path):
    page = _report_on_labels(tmp_path / "r", ["\u202eevil", "\u2067good"]).read_text(
        encoding="utf-8")
    # Each label is an isolate of its own (FSI ... PDI) with its own scopes closed.
    assert "\u2068\u202eevil\u202c\u2069 vs \u2068\u2067good\u2069\u2069" in page
    assert page.count("\u202c") == page.count("\u202e") > 0
    assert page.count("\u2069") == page.count("\u2067") + page.count("\u2068")


def test_long_labels_are_cut_in_figures_only(tmp_path, monkeypatch):
    from sklearn_clda.datasets import make_compound_corpus
    from sklearn_clda.plotting import CollectionTopicDisplay

    corpus = make_compound_corpus(n_topics=3, n_features=20, n_collections=2,
                                  docs_per_collection=15, doc_length=20, random_state=0)
    long = "x" * 5000
    groups = np.array([long, "short"])[corpus.groups]
    model = CompoundLDA(n_components=3, max_iter=20, thin=1, random_state=0)
    model.fit(corpus.data, groups=groups)
    drawn = []
    plot = CollectionTopicDisplay.plot
    monkeypatch.setattr(CollectionTopicDisplay, "plot", lambda self, *a, **kw: (
        drawn.append(list(self.collection_labels)), plot(self, *a, **kw))[1])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # (matplotlib's layout warnings)
        write_report(model, corpus.data, [f"w{i}" for i in range(20)], tmp_path / "r",
                     groups=groups)
    assert drawn and all(label in ("x" * 39 + "\u2026", "short")
                         for labels in drawn for label in labels)
    assert long in (tmp_path / "r" / "index.html").read_text(encoding="utf-8")


def test_output_folder_may_be_a_link_to_a_folder(tmp_path, bad_inputs):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    good = bad_inputs[0] / "good.csv"
    code, _, err = _run(["report", "--input", str(good), "--text-column", "body",
                         "--group-column", "outlet", "--out", str(tmp_path / "link"),
                         "-k", "2", "-n", "6", "--no-progress"])
    assert code == 0, err
    assert (real / "index.html").is_file() and (real / "model.npz").is_file()
    assert load_model(real / "model.npz").n_components == 2


def test_write_report_refuses_an_empty_folder_name(csv_report, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pipe = joblib.load(csv_report["out"] / "model.joblib")
    X = pipe[:-1].transform([t for t, _ in csv_report["docs"]])
    with pytest.raises(InputError, match="empty path"):
        write_report(pipe, X, pipe[:-1].get_feature_names_out(), "")
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------
# Missing labels and Ctrl-C
# ---------------------------------------------------------------------------


def test_missing_labels_are_skipped_not_named_nan(tmp_path):
    lines = [
        '{"text": "goal team match", "group": "sport"}',
        '{"text": "market bank stock", "group": NaN}',
        '{"text": "goal referee", "group": null}',
        '{"text": "bank profit", "group": Infinity}',
        '{"text": NaN, "group": "sport"}',
        '{"text": "stock shares", "group": 2024}',
    ]
    path = tmp_path / "docs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    docs = load_documents(path)
    assert docs.groups == ["sport", "2024"]
    assert docs.texts == ["goal team match", "stock shares"]
    assert docs.n_skipped == 4
    assert docs.notes == [
        "skipped 1 empty or whitespace-only document(s) (line 5)",
        "skipped 3 document(s) without a collection label (column 'group') "
        "(line 2, line 3, line 4)",
    ]

    csv_path = tmp_path / "docs.csv"
    csv_path.write_text("text,group\ngoal team,sport\nbank stock,\nmarket, \n",
                        encoding="utf-8")
    docs = load_documents(csv_path)
    assert docs.groups == ["sport"] and docs.n_skipped == 2
    assert "without a collection label" in docs.notes[0]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child needs POSIX")
def test_ctrl_c_in_the_report_exits_130_without_traceback(tmp_path):
    path = _write_csv(tmp_path / "docs.csv", _make_documents())
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    out = tmp_path / "out"
    with interruptible_child(
        [sys.executable, "-m", "sklearn_clda", "report", "--input", str(path),
         "--text-column", "body", "--group-column", "outlet", "--out", str(out),
         "-k", "3", "-n", "1000000", "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path, env=env, text=True,
    ) as proc:
        for line in proc.stdout:
            if line.startswith("Vocabulary:"):  # printed just before the fit
                break
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Warning" not in err, err
    assert err.strip().splitlines()[-1] == "python -m sklearn_clda report: interrupted"
    assert not (out / "index.html").exists()


# ---------------------------------------------------------------------------
# The rebuilt report: one summary, CSV tables, ordering, effective draws
# ---------------------------------------------------------------------------


def _summary(out):
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


def test_page_is_rendered_from_report_json(csv_report):
    from sklearn_clda.report._render import render_page

    out = csv_report["out"]
    page = (out / "index.html").read_text(encoding="utf-8")
    assert render_page(_summary(out)) == page


def test_input_is_named_by_its_file_name_not_its_path(csv_report):
    out = csv_report["out"]
    folder = str(out.parent)
    assert _summary(out)["input"]["source"] == "docs.csv"
    for name in ["index.html", "report.json", *[p.name for p in out.glob("*.csv")]]:
        assert folder not in (out / name).read_text(encoding="utf-8"), name


@pytest.mark.parametrize("thin, words", [
    (1, "every sweep"), (2, "every 2nd sweep"), (3, "every 3rd sweep"),
    (4, "every 4th sweep"), (11, "every 11th sweep"), (12, "every 12th sweep"),
    (13, "every 13th sweep"), (21, "every 21st sweep"), (22, "every 22nd sweep"),
    (101, "every 101st sweep"), (111, "every 111th sweep"), (1002, "every 1,002nd sweep"),
])
def test_how_often_draws_are_kept_reads_as_an_ordinal(thin, words):
    from sklearn_clda.report._render import every

    assert every(thin) == words


def test_csv_tables_hold_the_page_s_numbers(csv_report):
    out = csv_report["out"]
    summary = _summary(out)
    model = load_model(out / "model.npz")
    pipe = joblib.load(out / "model.joblib")

    def read(name):
        with open(out / name, newline="", encoding="utf-8") as fh:
            return list(csv.DictReader(fh))

    rows = read("collection_topics.csv")
    K, J = model.n_components, len(model.groups_)
    assert len(rows) == J * K
    for row in rows:
        j, k = model.groups_.tolist().index(row["collection"]), int(row["topic"])
        assert float(row["mean"]) == pytest.approx(model.collection_topic_[j, k], rel=1e-12)
        assert float(row["lower"]) <= float(row["mean"]) <= float(row["upper"])
        assert float(row["ess"]) == pytest.approx(summary["collection_topic"]["ess"][j][k])
    topics = read("topics.csv")
    assert [int(t["topic"]) for t in topics] == summary["topic_order"]
    assert [t["top_words"].split() for t in topics] == [
        summary["topics"][k]["top_words"] for k in summary["topic_order"]]
    documents = read("document_topics.csv")
    assert len(documents) == 60
    assert [d["collection"] for d in documents] == [g for _, g in csv_report["docs"]]
    theta = np.array([[float(d[f"topic_{k}"]) for k in range(K)] for d in documents])
    np.testing.assert_allclose(theta, pipe[-1].doc_topic_, rtol=1e-5)
    assert {d["collection"] for d in read("distinctive_topics.csv")} == set(COLLECTIONS)
    assert set(summary["downloads"].values()) <= set(summary["files"])


def test_topics_that_go_together_are_those_within_the_collections(csv_report):
    """The page's pairs are topic_correlation's within the collections, the
    CSV holds every pair that is an edge either way, with both numbers."""
    from sklearn_clda.inspection import topic_correlation

    out = csv_report["out"]
    summary = _summary(out)
    model = joblib.load(out / "model.joblib")[-1]
    groups = [g for _, g in csv_report["docs"]]
    within = topic_correlation(model, groups=groups, within_collections=True,
                               n_bootstrap=200, random_state=0)
    corpus = topic_correlation(model, groups=groups)
    pairs = summary["topic_pairs"]
    assert pairs["within"] and pairs["n_edges"] == len(within.edges)
    assert pairs["n_edges_corpus"] == len(corpus.edges)
    # 60 documents, 3 topics: 200 resamples, of the correlations within
    assert pairs["n_bootstrap"] == 200 and pairs["interval"] == 0.9
    assert pairs["n_clear"] == int(within.edges["clear"].sum())
    for row in pairs["edges"]:
        a, b = row["topic_a"], row["topic_b"]
        assert row["within"] == pytest.approx(within.correlation[a, b])
        assert row["corpus"] == pytest.approx(corpus.correlation[a, b])
        assert row["lower"] == pytest.approx(within.lower[a, b])
        assert row["upper"] == pytest.approx(within.upper[a, b])
        assert row["clear"] == (within.lower[a, b] > pairs["cutoff"])
    for row in pairs["collection_only"]:
        a, b = row["topic_a"], row["topic_b"]
        assert corpus.adjacency[a, b] and not within.adjacency[a, b]
    with open(out / "topic_correlations.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == int(np.triu(within.adjacency | corpus.adjacency, k=1).sum())
    for row in rows:
        a, b = int(row["topic_a"]), int(row["topic_b"])
        assert float(row["lower"]) == pytest.approx(within.lower[a, b])
    page = " ".join((out / "index.html").read_text(encoding="utf-8").split())
    assert "<h3>Topics that go together</h3>" in page
    section = page.split("<h3>Topics that go together</h3>")[1].split("</table>")[0]
    assert "within the collections" in section
    if pairs["edges"]:
        assert "90% interval</th>" in section
        assert section.count('<tr class="unsure">') == sum(
            not row["clear"] for row in pairs["edges"])


def test_correlation_intervals_fit_the_time_they_may_take(tmp_path, monkeypatch):
    from sklearn_clda.report import _analysis

    # news16 at 20 topics: all 200 resamples; at 100, fewer; past the
    # budget at the fewest, none.
    assert _analysis.bootstrap_draws(10_764, 20) == 200
    assert 50 <= _analysis.bootstrap_draws(10_764, 100) < 200
    assert _analysis.bootstrap_draws(1_000_000, 100) == 0
    monkeypatch.setattr(_analysis, "BOOTSTRAP_WORK", 1.0)
    docs = _make_documents()
    X = CountVectorizer().fit_transform([t for t, _ in docs])
    groups = [g for _, g in docs]
    model = CompoundLDA(n_components=3, max_iter=30, random_state=0).fit(X, groups=groups)
    summary = write_report(model, X, [f"w{i}" for i in range(X.shape[1])], tmp_path / "r",
                           groups=groups, figures=False)
    pairs = summary["topic_pairs"]
    assert pairs["n_bootstrap"] == 0 and pairs["n_clear"] is None
    assert all(row["lower"] is None and row["clear"] is None for row in pairs["edges"])
    page = " ".join((tmp_path / "r" / "index.html").read_text(encoding="utf-8").split())
    assert "too many to resample the correlations" in page


def test_heatmap_and_tables_follow_the_topic_table(csv_report, tmp_path, monkeypatch):
    from sklearn_clda.plotting import CollectionTopicDisplay

    drawn = {}
    plot = CollectionTopicDisplay.plot

    def record(self, *args, **kwargs):
        drawn[kwargs.get("kind") or self.kind] = (list(self.topics), self.proportions)
        return plot(self, *args, **kwargs)

    monkeypatch.setattr(CollectionTopicDisplay, "plot", record)
    pipe = joblib.load(csv_report["out"] / "model.joblib")
    X = pipe[:-1].transform([t for t, _ in csv_report["docs"]])
    summary = write_report(pipe, X, pipe[:-1].get_feature_names_out(), tmp_path / "r")
    order = summary["topic_order"]
    shares = [summary["topics"][k]["share"] for k in order]
    assert shares == sorted(shares, reverse=True) and order != sorted(order)
    topics, proportions = drawn["heatmap"]
    assert topics == order
    np.testing.assert_array_equal(proportions, pipe[-1].collection_topic_[:, order])
    page = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    for table in ["topics-table", "collection-topic-table"]:
        body = page[page.index(f'id="{table}"'):]
        body = body[:body.index("</tbody>")]
        rows = re.findall(r'<tr[^>]*><td class="num" data-sort="(\d+)">', body)
        assert [int(k) for k in rows] == order, table


@pytest.mark.parametrize("lower, upper, ess, expected", [
    (0.01, 0.05, 150.0, "clear"), (-0.05, -0.01, 100.0, "clear"),
    (-0.01, 0.05, 150.0, "uncertain"), (0.01, 0.05, 99.9, "few draws"),
    (0.01, 0.05, None, "few draws"), (0.01, 0.05, float("nan"), "few draws"),
])
def test_a_difference_is_clear_only_on_enough_effective_draws(lower, upper, ess, expected):
    from sklearn_clda.report._summary import verdict

    assert verdict(lower, upper, ess) == expected


@pytest.fixture(scope="module")
def small_corpus():
    docs = _make_documents()
    vectorizer = CountVectorizer()
    X = vectorizer.fit_transform([t for t, _ in docs])
    return X, [g for _, g in docs], vectorizer.get_feature_names_out()


def test_report_on_too_few_effective_draws_calls_nothing_clear(small_corpus, tmp_path):
    from sklearn_clda.report import extend_chain

    X, groups, names = small_corpus
    model = CompoundLDA(n_components=3, max_iter=24, thin=1, random_state=0)
    model.fit(X, groups=groups)
    extension = extend_chain(model, X, groups, time_budget=0)
    assert extension["rounds"] == 0 and extension["method"] is None
    assert extension["sweeps_after"] == extension["sweeps_before"] == 24
    assert not extension["reached"] and extension["ess_after"] < 100
    summary = write_report(model, X, names, tmp_path / "r", groups=groups,
                           extension=extension, figures=False)
    # The themes are plain: with enough draws these differences would be clear.
    rows = [row for entry in summary["distinctive"] for row in entry["topics"]]
    assert rows and all(row["difference_lower"] > 0 for row in rows)
    assert all(row["verdict"] == "few draws" and not row["clear"] for row in rows)
    diag = summary["diagnostics"]
    assert diag["n_below_target"] == diag["n_intervals"] == 9
    page = " ".join((tmp_path / "r" / "index.html").read_text(encoding="utf-8").split())
    assert 'class="clear"' not in page.split('id="distinctive"')[1].split("</p>", 1)[1]
    assert "The time budget of 0.0 s ended first" in page
    assert page.count("&dagger;") >= 9


def test_extend_chain_runs_the_same_chain_further(small_corpus):
    from sklearn_clda.report import extend_chain

    X, groups, _ = small_corpus
    model = CompoundLDA(n_components=3, max_iter=40, thin=1, random_state=0)
    model.fit(X, groups=groups)
    before = model.collection_topic_samples_.copy()
    extension = extend_chain(model, X, groups, min_ess=60, time_budget=60)
    assert extension["reached"] and extension["rounds"] >= 1
    assert extension["ess_after"] >= 60 > extension["ess_before"]
    assert model.n_iter_ == model.max_iter == extension["sweeps_after"] > 40
    assert model.burn_in_ == 20
    # The first draws are those of the shorter fit: the same chain, run further.
    np.testing.assert_array_equal(model.collection_topic_samples_[:20], before)
    assert model.collection_topic_samples_.shape[0] == model.n_iter_ - 20


def test_time_budget_must_be_a_number_of_seconds(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["-n", "4", "--report", "out", "--time-budget", "-1"])
    assert exc.value.code == 2
    assert "--time-budget must be a number of seconds >= 0, got -1.0" in capsys.readouterr().err


@pytest.mark.parametrize("module, flags, message", [
    ("jinja2", [], "the report's figures and page need matplotlib and Jinja2"),
    ("matplotlib", [], "the report's figures and page need matplotlib and Jinja2"),
    ("pandas", [], "the report's analysis (sklearn_clda.inspection) needs pandas"),
    ("jinja2", ["--no-figures"], "the report's page needs Jinja2, an optional dependency"),
])
@pytest.mark.parametrize("argv", [["report", "--input", "x.csv", "--out", "OUT"],
                                  ["-n", "2", "--report", "OUT"]])
def test_a_missing_dependency_names_its_extra(tmp_path, argv, module, flags, message,
                                              hide_modules, capsys):
    """One line naming what is missing and the extra to install; without
    figures, matplotlib is not asked for."""
    argv = [str(tmp_path / a) if a in ("x.csv", "OUT") else a for a in argv]
    (tmp_path / "x.csv").write_text("text,group\na b c,x\nd e f,y\n", encoding="utf-8")
    hide_modules(module)
    try:
        code = main([*argv, *flags])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in err
    extra = "inspect" if module == "pandas" else "plot"
    assert f'pip install "sklearn-clda[{extra}]"' in err
    assert ("matplotlib" in err) == (module != "pandas" and not flags)
    assert "Traceback" not in err
    assert not (tmp_path / "OUT").exists()


def test_a_report_without_figures_needs_no_matplotlib(tmp_path, hide_modules):
    """``--no-figures`` (``figures=False``): the page, tables and models
    without a figure, a note saying so, and no import of matplotlib."""
    docs = _make_documents()
    csv_path = _write_csv(tmp_path / "docs.csv", docs)
    hide_modules("matplotlib")
    out = tmp_path / "r"
    code, _, err = _run(["report", "--input", str(csv_path), "--text-column", "body",
                         "--group-column", "outlet", "--out", str(out), "--no-figures",
                         *REPORT_ARGS])
    assert code == 0, err
    summary = _summary(out)
    assert summary["figures"] == {}
    assert not list(out.glob("*.png"))
    assert {"index.html", "collection_topics.csv", "model.npz"} <= set(summary["files"])
    page = " ".join((out / "index.html").read_text(encoding="utf-8").split())
    assert "<img" not in page
    assert "The figures were not drawn (figures=False, or --no-figures" in page


def test_no_figures_without_a_report_is_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["-n", "4", "--no-figures"])
    assert exc.value.code == 2
    assert "--no-figures leaves the report's figures out: give --report DIR too" in (
        capsys.readouterr().err)


def test_extend_chain_continues_a_kept_chain(small_corpus):
    from sklearn_clda.report import extend_chain

    X, groups, _ = small_corpus
    model = CompoundLDA(n_components=3, max_iter=40, thin=1, random_state=0,
                        warm_start=True)
    model.fit(X, groups=groups)
    extension = extend_chain(model, X, groups, min_ess=60, time_budget=60)
    assert extension["method"] == "warm_start" and extension["reached"]
    total = extension["sweeps_after"]
    assert model.n_iter_ == model.max_iter == total > 40 and model.burn_in == 20
    # The result is that of one fit of all the sweeps: the same chain, run further.
    assert extension["ess_after"] >= 60
    whole = CompoundLDA(n_components=3, max_iter=total, burn_in=20, thin=1,
                        random_state=0).fit(X, groups=groups)
    np.testing.assert_array_equal(model.collection_topic_samples_,
                                  whole.collection_topic_samples_)
    np.testing.assert_array_equal(model.components_, whole.components_)


@pytest.mark.parametrize("before, after, growth, stalled", [
    (10.0, 17.5, 4.0, False),  # a quarter of linear growth: enough
    (10.0, 17.4, 4.0, True),
    (10.0, 40.0, 4.0, False),
    (10.0, 9.0, 2.0, True),    # the ESS fell
    (None, 5.0, 4.0, False),   # nothing to compare with
])
def test_a_round_stalls_below_a_quarter_of_linear_growth(before, after, growth, stalled):
    from sklearn_clda.report._extend import _stalled

    assert _stalled(before, after, growth) is stalled


def test_extend_chain_stops_when_the_ess_does_not_grow(small_corpus, monkeypatch):
    """A chain whose smallest ESS stays put (pi drifting over more sweeps
    than it has) is extended by one round of at most MAX_ROUND_GROWTH times
    its kept sweeps, not until the budget is spent."""
    from sklearn_clda.report import _extend, extend_chain

    X, groups, _ = small_corpus
    model = CompoundLDA(n_components=3, max_iter=200, thin=1, random_state=0,
                        warm_start=True).fit(X, groups=groups)
    assert model.collection_topic_samples_.shape[0] == _extend.MIN_STALL_DRAWS
    monkeypatch.setattr(_extend, "smallest_ess", lambda model: 5.0)
    extension = extend_chain(model, X, groups, min_ess=100, time_budget=600)
    assert extension["stalled"] and not extension["reached"]
    assert extension["rounds"] == 1
    # 100 kept sweeps became at most 4 x 100: 500 sweeps in all.
    assert extension["sweeps_after"] == model.n_iter_ == 100 + 100 * _extend.MAX_ROUND_GROWTH
    assert extension["seconds"] < 60


def test_a_budget_past_any_sweep_count_plans_a_finite_run(small_corpus):
    """--time-budget 1e308 affords infinitely many sweeps: the plan is the
    extrapolated run (math.floor(inf) raised OverflowError)."""
    from sklearn_clda.report._extend import _planned_sweeps

    X, groups, _ = small_corpus
    model = CompoundLDA(n_components=3, max_iter=40, thin=1, random_state=0).fit(X, groups=groups)
    for method in ("warm_start", "refit"):
        assert _planned_sweeps(model, 10.0, 100.0, 1e308 / 1e-9, method) == 20 + 4 * 20


def test_extend_chain_does_not_judge_a_stall_on_few_draws(small_corpus, monkeypatch):
    """With fewer than MIN_STALL_DRAWS kept draws the ESS is too noisy to
    call a stall: the rounds go on (at most 4x each) until there are enough."""
    from sklearn_clda.report import _extend, extend_chain

    X, groups, _ = small_corpus
    model = CompoundLDA(n_components=3, max_iter=40, thin=1, random_state=0,
                        warm_start=True).fit(X, groups=groups)
    monkeypatch.setattr(_extend, "smallest_ess", lambda model: 5.0)
    extension = extend_chain(model, X, groups, min_ess=100, time_budget=600)
    # 20 kept sweeps, then 80 and 320 (rounds from fewer than 100 draws: not
    # judged), then 1280 (from 320: judged, stalled).
    assert extension["stalled"] and extension["rounds"] == 3
    assert extension["sweeps_after"] == 20 + 1280


def test_the_report_says_a_stalled_chain_needs_other_seeds(small_corpus, tmp_path):
    X, groups, names = small_corpus
    model = CompoundLDA(n_components=3, max_iter=24, thin=1, random_state=0)
    model.fit(X, groups=groups)
    extension = {"target": 100.0, "budget": 30.0, "method": "warm_start", "rounds": 1,
                 "sweeps_before": 12, "sweeps_after": 24, "seconds": 1.0,
                 "ess_before": 5.0, "ess_after": 5.5, "reached": False, "stalled": True}
    write_report(model, X, names, tmp_path / "r", groups=groups, extension=extension,
                 figures=False)
    page = " ".join((tmp_path / "r" / "index.html").read_text(encoding="utf-8").split())
    assert "It stopped early" in page and "<code>--chains 4</code>" in page
    assert "The time budget of" not in page
    from sklearn_clda.__main__ import _extension_outcome

    assert _extension_outcome(extension).startswith("stopped: it does not grow")


def test_topics_are_labelled_by_frex_with_probable_words_beside(csv_report):
    from sklearn_clda.inspection import topic_labels

    out = csv_report["out"]
    summary = _summary(out)
    model = load_model(out / "model.npz")
    vocabulary = (out / "vocabulary.txt").read_text(encoding="utf-8").splitlines()
    labels = topic_labels(model, vocabulary, method="frex", n_words=10)
    assert summary["labels"]["method"] == "frex"
    assert [t["label_words"] for t in summary["topics"]] == labels["words"].tolist()
    assert [t["top_words"] for t in summary["topics"]] == labels["prob_words"].tolist()
    page = (out / "index.html").read_text(encoding="utf-8")
    table = page[page.index('id="topics-table"'):page.index("</table>", page.index(
        'id="topics-table"'))]
    for topic in summary["topics"]:
        assert " ".join(topic["label_words"]) in table
        if topic["label_words"] != topic["top_words"]:
            assert "most probable: " + " ".join(topic["top_words"]) in table


def test_representative_documents_of_topics_and_collections(csv_report):
    out = csv_report["out"]
    summary = _summary(out)
    pipe = joblib.load(out / "model.joblib")
    texts = [t for t, _ in csv_report["docs"]]
    groups = [g for _, g in csv_report["docs"]]
    theta = pipe[-1].transform(pipe[:-1].transform(texts), groups=groups)
    entries = summary["representative_documents"]
    assert [e["topic"] for e in entries] == summary["topic_order"]
    for entry in entries:
        k = entry["topic"]
        rows = [d["row"] for d in entry["documents"]]
        assert rows == np.argsort(-theta[:, k], kind="stable")[:3].tolist()
        for doc in entry["documents"]:
            assert doc["weight"] == pytest.approx(theta[doc["row"], k])
            text, snippet = texts[doc["row"]], doc["snippet"]
            assert snippet == text or text.startswith(snippet.removesuffix(" \u2026"))
            assert doc["collection"] == groups[doc["row"]]
    for entry in summary["distinctive"]:
        mine = [d for d, g in enumerate(groups) if g == entry["collection"]]
        for row in entry["topics"]:
            k = row["topic"]
            best = sorted(mine, key=lambda d: (-theta[d, k], d))[:2]
            assert [d["row"] for d in row["documents"]] == best
    page = (out / "index.html").read_text(encoding="utf-8")
    assert page.count('<ul class="docs">') == len(entries) + sum(
        1 for e in summary["distinctive"] for r in e["topics"] if r["documents"])


def test_document_snippets_are_escaped_and_shortened(csv_report, tmp_path):
    pipe = joblib.load(csv_report["out"] / "model.joblib")
    texts = [t for t, _ in csv_report["docs"]]
    groups = [g for _, g in csv_report["docs"]]
    X = pipe[:-1].transform(texts)
    marked = ["<img src=x onerror=alert(1)> " + t + " tail" * 100 for t in texts]
    summary = write_report(pipe, X, pipe[:-1].get_feature_names_out(), tmp_path / "r",
                           groups=groups, texts=marked, figures=False)
    page = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<img src=x" not in page
    snippets = [d["snippet"] for e in summary["representative_documents"]
                for d in e["documents"]]
    assert snippets and all(len(s) <= 282 and s.endswith("\u2026") for s in snippets)
    assert all(s.startswith("<img src=x onerror=alert(1)> ") for s in snippets)


def test_every_pair_of_collections_is_compared(csv_report):
    from sklearn_clda.inspection import compare_collections

    out = csv_report["out"]
    summary = _summary(out)
    model = load_model(out / "model.npz")
    pairs = summary["comparisons"]["pairs"]
    labels = model.groups_.tolist()
    assert [(p["a"], p["b"]) for p in pairs] == [
        (labels[a], labels[b]) for a in range(3) for b in range(a + 1, 3)]
    for pair in pairs:
        expected = compare_collections(model, pair["a"], pair["b"], ci=0.9)
        expected = expected.set_index("topic").loc[summary["topic_order"]]
        rows = pair["rows"]
        assert [r["topic"] for r in rows] == summary["topic_order"]
        np.testing.assert_allclose([r["difference"] for r in rows], expected["mean"])
        np.testing.assert_allclose([r["lower"] for r in rows], expected["lower"])
        np.testing.assert_allclose([r["p_greater"] for r in rows], expected["prob_greater"])
        np.testing.assert_allclose([r["ess"] for r in rows], expected["ess"])
        for r in rows:
            a, b = labels.index(pair["a"]), labels.index(pair["b"])
            assert r["share_a"] == pytest.approx(model.collection_topic_[a, r["topic"]])
            assert r["share_b"] == pytest.approx(model.collection_topic_[b, r["topic"]])
    page = (out / "index.html").read_text(encoding="utf-8")
    assert page.count('<div class="pair" id="pair-') == 3
    with open(out / "collection_comparisons.csv", newline="", encoding="utf-8") as fh:
        assert len(list(csv.DictReader(fh))) == 3 * 3


def test_pairs_past_the_page_s_limit_are_in_the_csv(small_corpus, tmp_path, monkeypatch):
    """Past MAX_COMPARED collections the page shows no pair (their number
    grows with the square of the collections') and says where they are; the
    CSV holds every pair up to MAX_CSV_COMPARED collections, and past that
    the page says how many are compared. (Tested with the limits at 2 and 3
    rather than 12 and 40: the same code.)"""
    from sklearn_clda.inspection import compare_collections
    from sklearn_clda.report import _summary

    X, groups, names = small_corpus  # 3 collections
    model = CompoundLDA(n_components=3, max_iter=40, thin=2, random_state=0)
    model.fit(X, groups=groups)
    monkeypatch.setattr(_summary, "MAX_COMPARED", 2)
    summary = write_report(model, X, names, tmp_path / "csv", groups=groups,
                           figures=False)
    cmp = summary["comparisons"]
    assert cmp["pairs"] == []
    assert cmp["omitted"] == ("3 collections (the page shows the pairs of up to 2); all 3 "
                              "pairs are in collection_comparisons.csv")
    page = " ".join((tmp_path / "csv" / "index.html").read_text(encoding="utf-8").split())
    assert f"No pairwise comparison is shown: {html.escape(cmp['omitted'])}." in page
    assert '<div class="pair" id="pair-' not in page
    with open(tmp_path / "csv" / "collection_comparisons.csv", newline="",
              encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    labels = model.groups_.tolist()
    assert [(r["a"], r["b"]) for r in rows[::3]] == [
        (labels[a], labels[b]) for a in range(3) for b in range(a + 1, 3)]
    assert [int(r["topic"]) for r in rows[:3]] == summary["topic_order"]
    expected = compare_collections(model, labels[0], labels[2], ci=0.9).set_index("topic")
    np.testing.assert_allclose([float(r["difference"]) for r in rows[3:6]],
                               expected.loc[summary["topic_order"], "mean"])

    monkeypatch.setattr(_summary, "MAX_CSV_COMPARED", 2)
    summary = write_report(model, X, names, tmp_path / "none", groups=groups,
                           figures=False)
    assert summary["comparisons"]["omitted"] == "3 collections (pairs are compared for up to 2)"
    assert "comparisons" not in summary["downloads"]
    assert not (tmp_path / "none" / "collection_comparisons.csv").exists()
    # nor are the distances between them (their number grows alike)
    assert summary["collection_distances"] is None
    assert "distances" not in summary["downloads"]
    assert {c["closest"] for c in summary["collections"]} == {None}
    page = (tmp_path / "none" / "index.html").read_text(encoding="utf-8")
    assert "Closest collection" not in page


@pytest.mark.parametrize("labels, ordered", [
    (["2001", "2005", "2010"], "numbers"), (["2020-01", "2020-06", "2021-01"], "dates"),
    (["north", "south", "west"], None),
])
def test_trend_figure_for_ordered_collections(small_corpus, tmp_path, labels, ordered):
    X, groups, names = small_corpus
    rename = dict(zip(COLLECTIONS, labels))
    groups = [rename[g] for g in groups]
    model = CompoundLDA(n_components=3, max_iter=40, thin=2, random_state=0)
    model.fit(X, groups=groups)
    summary = write_report(model, X, names, tmp_path / "r", groups=groups)
    assert summary["trend"]["ordered"] == (ordered is not None)
    assert summary["trend"]["kind"] == ordered
    trend = tmp_path / "r" / "collection_trends.png"
    if ordered:
        assert summary["trend"]["order"] == labels
        assert summary["figures"]["trend"] == trend.name
        _check_pngs(tmp_path / "r", [trend.name])
    else:
        assert "trend" not in summary["figures"] and not trend.exists()


def test_many_collections_get_a_panel_per_topic_not_grouped_bars(small_corpus, tmp_path,
                                                                  monkeypatch):
    """Grouped bars give each collection a color and a legend row: past
    MAX_BAR_COLLECTIONS they repeat colors and overflow the figure. Then the
    figure has a panel per topic and a row per collection, and says so."""
    from sklearn_clda.plotting import CollectionTopicDisplay
    from sklearn_clda.report import _summary

    X, groups, names = small_corpus
    many = [f"{g}-{i % 4}" for i, g in enumerate(groups)]  # 12 collections
    assert len(set(many)) == _summary.MAX_BAR_COLLECTIONS + 2
    drawn = []
    plot = CollectionTopicDisplay.plot
    monkeypatch.setattr(CollectionTopicDisplay, "plot",
                        lambda self, *a, **kw: drawn.append(self.kind) or plot(self, *a, **kw))
    for labels, chart, caption in ((groups, "bars", "one bar per collection"),
                                   (many, "points", "a panel per topic and a row per\ncollection")):
        model = CompoundLDA(n_components=3, max_iter=40, thin=2, random_state=0)
        model.fit(X, groups=labels)
        drawn.clear()
        out = tmp_path / chart
        summary = write_report(model, X, names, out, groups=labels)
        assert summary["collection_topic"]["chart"] == chart
        assert drawn == ["heatmap", chart]
        assert caption in (out / "index.html").read_text(encoding="utf-8")
        _check_pngs(out, ["collection_topics_bars.png"])


def test_page_shows_the_largest_collections_and_the_csv_all(small_corpus, tmp_path,
                                                            monkeypatch):
    """Past MAX_PAGE_COLLECTIONS the page's per-collection parts (the
    collection-topic table, the figures, each collection's card and words)
    show the collections with the most documents, say so, and the CSV
    tables and report.json keep every collection (1,000 collections of ten
    documents made an 11 MB page)."""
    from collections import Counter

    from sklearn_clda.plotting import CollectionTopicDisplay
    from sklearn_clda.report import _summary

    monkeypatch.setattr(_summary, "MAX_PAGE_COLLECTIONS", 5)
    X, groups, names = small_corpus
    counts = [2, 2, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10]  # 12 collections, 60 documents
    labels = [f"c{j:02d}" for j, n in enumerate(counts) for _ in range(n)]
    random.Random(0).shuffle(labels)
    assert len(labels) == len(groups)
    sizes = Counter(labels)
    J = len(sizes)
    ranked = sorted(sizes, key=lambda c: (-sizes[c], c))
    expected = sorted(ranked[:5])
    drawn = []
    plot = CollectionTopicDisplay.plot
    monkeypatch.setattr(CollectionTopicDisplay, "plot", lambda self, *a, **kw: drawn.append(
        list(self.collection_labels)) or plot(self, *a, **kw))
    model = CompoundLDA(n_components=3, max_iter=40, thin=2, random_state=0)
    model.fit(X, groups=labels)
    out = tmp_path / "r"
    summary = write_report(model, X, names, out, groups=labels)
    assert summary["shown_collections"] == expected
    assert drawn == [expected, expected]  # the heatmap and the chart
    page = (out / "index.html").read_text(encoding="utf-8")
    assert page.count(f"With {J} collections, this section shows the\n5 with") == 3
    table = page.split('id="collection-topic-table"')[1].split("</thead>")[0]
    assert re.findall(r">(c\d\d)</th>", table) == expected
    cards = re.findall(r'<div class="card"><h3>(c\d\d) ', page)
    assert cards == expected
    words = page.split("How each collection words a topic")[1].split("</section>")[0]
    assert set(re.findall(r"<tr><td>(c\d\d)</td>", words)) <= set(expected)
    with open(out / "collection_topics.csv", newline="", encoding="utf-8") as fh:
        assert {row["collection"] for row in csv.DictReader(fh)} == set(sizes)
    with open(out / "distinctive_topics.csv", newline="", encoding="utf-8") as fh:
        assert {row["collection"] for row in csv.DictReader(fh)} > set(expected)
    assert len(json.loads((out / "report.json").read_text())["collections"]) == J
    # Up to the limit, everything is shown and nothing is said.
    monkeypatch.setattr(_summary, "MAX_PAGE_COLLECTIONS", J)
    summary = write_report(model, X, names, tmp_path / "all", groups=labels,
                           figures=False)
    assert summary["shown_collections"] is None
    page = (tmp_path / "all" / "index.html").read_text(encoding="utf-8")
    assert "this section shows the" not in page
    assert len(re.findall(r'<div class="card"><h3>(c\d\d) ', page)) == J


def test_collection_documents_come_from_the_collection(tmp_path):
    # Collection "A" mixes sport (60%) with money; "B" is money but holds three
    # purely sport documents, the corpus' most sporty ones. A's documents on
    # sport must still be A's own.
    rng = random.Random(1)

    def doc(sport_share):
        return " ".join(rng.choice(THEMES["sport"] if rng.random() < sport_share
                                   else THEMES["money"]) for _ in range(40))

    texts = [doc(0.6) for _ in range(20)] + [doc(0.0) for _ in range(17)] + [
        doc(1.0) for _ in range(3)]
    groups = ["A"] * 20 + ["B"] * 20
    vectorizer = CountVectorizer()
    X = vectorizer.fit_transform(texts)
    model = CompoundLDA(n_components=2, max_iter=60, thin=2, random_state=0)
    model.fit(X, groups=groups)
    summary = write_report(model, X, vectorizer.get_feature_names_out(), tmp_path / "r",
                           groups=groups, texts=texts, figures=False)
    entry = next(e for e in summary["distinctive"] if e["collection"] == "A")
    (row,) = entry["topics"]
    sport = row["topic"]
    assert summary["topics"][sport]["top_words"][0] in THEMES["sport"]
    best = {d["row"] for e in summary["representative_documents"] if e["topic"] == sport
            for d in e["documents"]}
    assert best & {37, 38, 39}  # overall, B's pure sport documents lead
    assert len(row["documents"]) == 2
    assert all(d["row"] < 20 and d["collection"] == "A" for d in row["documents"])


def test_saved_model_carries_no_kept_chain(csv_report):
    # The report runs the chain further with warm_start, then saves the model
    # as if fitted in one go: no chain state in model.joblib.
    model = joblib.load(csv_report["out"] / "model.joblib")[-1]
    assert model.get_params()["warm_start"] is False
    assert not hasattr(model, "_warm_chain")
    assert model.max_iter == model.n_iter_ and model.burn_in == model.burn_in_


def test_figures_of_every_topic_draw_the_largest_forty(small_corpus, tmp_path,
                                                        monkeypatch):
    """The heatmap and the word panels grew with K (43 s and a 14,000-pixel
    image at K = 400): past MAX_FIGURE_TOPICS they (and the topic graph)
    draw the largest topics,
    the page says so, and the tables keep every topic. (Tested with the
    limit at 6 rather than 40: the same code, a fifth of the drawing.)"""
    from sklearn_clda.report import _summary

    assert _summary.MAX_FIGURE_TOPICS == 40
    monkeypatch.setattr(_summary, "MAX_FIGURE_TOPICS", 6)
    MAX_FIGURE_TOPICS = 6
    X, groups, names = small_corpus
    heights, pages = {}, {}
    for K in (MAX_FIGURE_TOPICS, MAX_FIGURE_TOPICS + 8):
        model = CompoundLDA(n_components=K, max_iter=6, thin=1, random_state=0)
        model.fit(X, groups=groups)
        out = tmp_path / str(K)
        summary = write_report(model, X, names, out, groups=groups, dpi=30)
        assert len(summary["topics"]) == K
        heights[K] = {key: imread(out / summary["figures"][key]).shape[0]
                      for key in ("words", "heatmap", "tree")}
        pages[K] = " ".join((out / "index.html").read_text(encoding="utf-8").split())
    assert summary["figure_topics"] == MAX_FIGURE_TOPICS
    assert heights[MAX_FIGURE_TOPICS] == heights[MAX_FIGURE_TOPICS + 8]
    assert "largest of the" not in pages[MAX_FIGURE_TOPICS]
    # the heatmap, the map (drawn and interactive), the words, their
    # quality, their tree and the graph of the topics that go together
    assert pages[MAX_FIGURE_TOPICS + 8].count(
        f"It shows the {MAX_FIGURE_TOPICS} largest of the {MAX_FIGURE_TOPICS + 8} topics") == 7


def test_the_tree_figure_is_topic_hierarchys_of_the_figures_topics():
    import matplotlib.pyplot as plt
    from scipy.cluster.hierarchy import linkage
    from scipy.spatial.distance import pdist

    from sklearn_clda.report._figures import _tree

    rng = np.random.default_rng(0)
    model = CompoundLDA(n_components=6)
    model.components_ = rng.gamma(0.5, size=(6, 30)) + 0.01
    order = [4, 0, 2, 5]
    words = [[f"t{k}w{i}" for i in range(3)] for k in range(6)]
    disp = _tree(model, order, words)
    phi = model.components_[order] / model.components_[order].sum(axis=1, keepdims=True)
    want = linkage(pdist(np.sqrt(phi)) / np.sqrt(2.0), "ward")
    assert np.allclose(sorted(max(d) for d in disp.dendrogram_["dcoord"]), want[:, 2])
    assert [t.get_text() for t in disp.ax_.get_yticklabels()] == [
        f"{order[i]}: t{order[i]}w0 t{order[i]}w1 t{order[i]}w2" for i in disp.leaves_]
    plt.close("all")


def test_the_map_figure_places_the_figures_topics_once_per_large_collection():
    import matplotlib.pyplot as plt
    from sklearn.utils import Bunch

    from sklearn_clda.inspection._map import topic_coordinates
    from sklearn_clda.report._figures import _MAP_PANELS, _map

    rng = np.random.default_rng(0)
    model = CompoundLDA(n_components=6)
    model.components_ = rng.gamma(0.5, size=(6, 30)) + 0.01
    n_collections = _MAP_PANELS + 3
    pi = rng.dirichlet(np.ones(6), size=n_collections)
    docs = np.arange(n_collections) % 5 + 1
    stats = Bunch(labels=[f"c{j}" for j in range(n_collections)], docs=docs, pi=pi,
                  corpus=docs @ pi / docs.sum())
    shown = np.arange(1, n_collections)  # the page leaves out the first
    order = [4, 0, 2, 5]
    disp = _map(model, stats, shown, order)
    largest = sorted(shown[np.argsort(-docs[shown], kind="stable")[:_MAP_PANELS]])
    assert [ax.get_title() for ax in disp.axes_.ravel()[:_MAP_PANELS]] == [
        f"c{j}" for j in largest]
    xy, _ = topic_coordinates(model.components_[order], "hellinger")
    assert np.allclose(disp.circles_[0].get_offsets(), xy)
    first = disp.circles_[0].get_sizes()
    assert np.allclose(first / first.sum(), pi[largest[0], order] / pi[largest[0], order].sum())
    dashed = disp.reference_circles_[0].get_sizes()
    assert np.allclose(dashed / first, stats.corpus[order] / pi[largest[0], order])
    assert [t.get_text() for t in disp.labels_[0]] == ["4", "0", "2", "5"]
    plt.close("all")


def test_the_quality_figure_draws_the_tables_topics(small_corpus, tmp_path):
    """Exclusivity is stm's of the label's number of top words, and the
    figure puts each topic at its table row's coherence and exclusivity."""
    from sklearn_clda.metrics import topic_exclusivity
    from sklearn_clda.report._figures import _quality

    X, groups, names = small_corpus
    model = CompoundLDA(n_components=5, max_iter=6, thin=1, random_state=0)
    model.fit(X, groups=groups)
    summary = write_report(model, X, names, tmp_path / "r", groups=groups, dpi=30)
    topics = summary["topics"]
    n_words = summary["labels"]["n_words"]
    assert [t["exclusivity"] for t in topics] == pytest.approx(
        topic_exclusivity(model.components_, n_words, frex_weight=0.7), rel=1e-12)
    order = summary["topic_order"][:3]
    display = _quality(topics, order, [t["label_words"] for t in topics])
    assert display.points_.get_offsets().tolist() == [
        [topics[k]["coherence"], topics[k]["exclusivity"]] for k in order]
    assert [label.get_text() for label in display.labels_] == [
        f"{k}: {' '.join(topics[k]['label_words'][:2])}" for k in order]
    import matplotlib.pyplot as plt

    plt.close(display.figure_)


def test_the_report_says_when_the_chain_halves_disagree(small_corpus, tmp_path):
    """A share whose split R-hat passes 1.01 drifts along the chain: the
    diagnostics say how many, and that other seeds show the uncertainty."""
    X, groups, names = small_corpus
    model = CompoundLDA(n_components=3, max_iter=40, thin=1, random_state=0)
    model.fit(X, groups=groups)
    # The second half of the kept draws moves away from the first.
    drift = model.collection_topic_samples_.copy()
    half = drift.shape[0] // 2
    drift[half:] = drift[half:] * 0.5 + 0.5 * drift[half:, :, ::-1]
    model.collection_topic_samples_ = drift
    summary = write_report(model, X, names, tmp_path / "r", groups=groups, figures=False)
    diag = summary["diagnostics"]
    assert diag["n_rhat_above"] > 0 and diag["rhat_max"] > 1.01
    page = " ".join((tmp_path / "r" / "index.html").read_text(encoding="utf-8").split())
    assert (f"For {diag['n_rhat_above']} of the 9 topic proportions the first and second "
            "halves of the kept chain disagree") in page
    assert "R-hat of &pi; (the chain's two halves)" in page


def test_extend_chain_needs_the_data_and_collections_of_the_fit(small_corpus):
    """Running further refits on X and groups: other collections (or none)
    would make it another model, in place; a VEM fit has no chain."""
    from sklearn_clda.report import extend_chain

    X, groups, _ = small_corpus
    model = CompoundLDA(n_components=3, max_iter=20, thin=1, random_state=0)
    model.fit(X, groups=groups)
    before = dict(vars(model))
    for args, message in [
        ((X, None), r"needs the collections the model was fitted with \(\['<b>Lab</b> & Sky', "
                    r"'Daily Sport', 'Money Times'\]\), got none \(groups=None\)"),
        ((X, ["a"] * X.shape[0]), r"got \['a'\]"),
        ((X[:10], groups[:10]), r"needs the data the model was fitted on: X has shape \(10, "),
    ]:
        with pytest.raises(ValueError, match=message):
            extend_chain(model, *args, time_budget=5)
        assert all(vars(model)[k] is v for k, v in before.items())
    vem = CompoundLDA(n_components=3, algorithm="vem", max_iter=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vem.fit(X, groups=groups)
    with pytest.raises(ValueError, match="fitted with algorithm='vem', which keeps no draws"):
        extend_chain(vem, X, groups, time_budget=5)


def test_largest_in_goes_by_the_lower_end_of_the_intervals():
    # A collection of two documents has the highest mean share of a small
    # topic (its mixture is mostly the prior's) but the widest interval.
    from sklearn_clda.inspection._info import most_used_in

    mean = np.array([[0.004, 0.3], [0.035, 0.2], [0.088, 0.1]])
    lower = np.array([[0.001, 0.25], [0.022, 0.1], [0.004, 0.05]])
    assert most_used_in(mean, lower).tolist() == [1, 0]
    lower[:, 0] = np.nan  # no interval: by the mean
    assert most_used_in(mean, lower).tolist() == [2, 0]


def test_a_character_the_figure_font_lacks_is_warned_once(tmp_path):
    # Every figure that draws the label warned again: eight identical lines.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _report_on_labels(tmp_path / "r", ["news \U0001F4F0", "blogs"])
    glyphs = [str(w.message) for w in caught if "Glyph" in str(w.message)]
    assert glyphs, [str(w.message) for w in caught]
    assert len(glyphs) == len(set(glyphs))


@pytest.mark.parametrize("labels", ["text", "numbers"])
def test_document_shares_pick_what_representative_documents_picks(labels):
    # The report folds the documents in once; its picks, in the corpus and
    # within each collection, are those of the public function, which folds
    # in each collection's documents on their own.
    from sklearn_clda.inspection import representative_documents
    from sklearn_clda.report._analysis import DocumentShares

    rng = np.random.default_rng(3)
    X = rng.poisson(1.0, size=(60, 12))
    X[[4, 30]] = 0  # documents without a word are never picked
    names = np.array(["b", "a", "c", "d"]) if labels == "text" else np.array([7, 3, 12, 5])
    groups = names[rng.integers(0, 3, size=60)]
    groups[[4, 30]] = names[3]  # a collection whose documents have no word
    model = CompoundLDA(n_components=3, max_iter=40, random_state=0).fit(X, groups=groups)
    shares = DocumentShares(model, X, groups)
    topics = [2, 0, 1]

    def public(**kwargs):
        table = representative_documents(model, X, groups, n=4, topic=topics, **kwargs)
        return {k: [(int(r.document), r.theta) for r in table[table.topic == k].itertuples()]
                for k in topics}

    assert shares.top(4, topics) == public()
    for label in model.groups_:  # (labels as the model holds them)
        if label == names[3]:
            assert shares.top(4, topics, label) == {}
        else:
            assert shares.top(4, topics, label) == public(collection=label)
    assert DocumentShares(model, X, None).top(4, topics, model.groups_[0]) == {}


def test_report_json_has_a_key_a_line_and_no_nan():
    summary = {"title": "r\u00e9sum\u00e9", "topics": [{"share": 0.5, "words": ["a", "b"]}],
               "none": None}
    text = files_module.json_text(summary)
    assert json.loads(text) == summary
    assert text.splitlines() == ["{", '  "title": "r\u00e9sum\u00e9",',
                                 '  "topics": [{"share": 0.5, "words": ["a", "b"]}],',
                                 '  "none": null', "}"]
    with pytest.raises(ValueError):  # (jsonable turns NaN into None first)
        files_module.json_text({"share": float("nan")})


def test_csv_tables_do_not_hand_spreadsheets_formulas(tmp_path):
    """Collection labels and document texts that start like a formula (CSV
    injection: ``=HYPERLINK(...)`` runs when the file is opened in Excel or
    LibreOffice) get an apostrophe in the CSV tables; numbers, negative
    ones included, and the page's own data keep them as they are."""
    rng = random.Random(1)
    labels = {"=SUM(1+1)": "sport", "@lab": "science", "-1": "money"}
    docs = ["=HYPERLINK(\"http://example.com\") "
            + " ".join(rng.choice(THEMES[theme]) for _ in range(25))
            for theme in labels.values() for _ in range(20)]
    groups = [label for label in labels for _ in range(20)]
    path = _write_csv(tmp_path / "docs.csv", list(zip(docs, groups)))
    out = tmp_path / "report"
    code, _, stderr = _run(["report", "--input", str(path), "--text-column", "body",
                            "--group-column", "outlet", "--out", str(out), "--no-figures",
                            *REPORT_ARGS])
    assert code == 0, stderr
    cells = []
    for table in out.glob("*.csv"):
        with open(table, newline="", encoding="utf-8") as fh:
            cells += [cell for row in csv.reader(fh) for cell in row]
    formulas = [c for c in cells if c[:1] in ("=", "+", "@") or (
        c[:1] == "-" and not re.fullmatch(r"-[\d.e+-]+|-inf|-nan", c))]
    assert not formulas, formulas[:5]
    assert "'=SUM(1+1)" in cells and "'@lab" in cells and "-1" in cells
    assert any(c.startswith("'=HYPERLINK") for c in cells)
    assert any(re.fullmatch(r"-0\.\d+(e-\d+)?", c) for c in cells)  # negative numbers stay
    summary = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert "=SUM(1+1)" in json.dumps(summary)


def test_themes_sum_the_draws_of_their_topics(small_corpus, tmp_path):
    """The page's themes are topic_themes' cut, each collection's share of a
    theme summarized from the sums of its topics' draws, as
    collection_topic_summary(topic_groups=...) summarizes them."""
    from sklearn_clda.inspection import collection_topic_summary, topic_themes

    X, groups, names = small_corpus
    model = CompoundLDA(n_components=6, max_iter=40, thin=1, random_state=0)
    model.fit(X, groups=groups)
    summary = write_report(model, X, names, tmp_path / "r", groups=groups, n_themes=3,
                           figures=False)
    themes = topic_themes(model, 3, names)
    got = summary["themes"]
    assert [row["name"] for row in got["rows"]] == list(themes)
    assert [row["topics"] for row in got["rows"]] == list(themes.values())
    table = collection_topic_summary(model, topic_groups=themes, ci=0.9)
    for j, label in enumerate(model.groups_):
        for t, name in enumerate(themes):
            row = table[(table["collection"] == label) & (table["topic"] == name)].iloc[0]
            assert np.isclose(got["lower"][j][t], row["lower"])
            assert np.isclose(got["upper"][j][t], row["upper"])
            assert np.isclose(got["ess"][j][t], row["ess"])
            topics = themes[name]
            assert np.isclose(got["mean"][j][t], model.collection_topic_[j, topics].sum())
    assert np.isclose(sum(got["corpus_wide"]), 1.0)
    page = " ".join((tmp_path / "r" / "index.html").read_text(encoding="utf-8").split())
    assert "Themes: the topics grouped by their words" in page
    assert "The 6 topics cut into 3 themes" in page
    csv_rows = list(csv.DictReader(open(tmp_path / "r" / "themes.csv", encoding="utf-8")))
    assert len(csv_rows) == 3 * len(model.groups_)
    assert csv_rows[0]["theme"] == list(themes)[0]
    assert csv_rows[0]["topics"] == " ".join(map(str, list(themes.values())[0]))


@pytest.mark.parametrize("n_themes, n_components, expected", [
    ("auto", 9, 0), ("auto", 10, 3), ("auto", 20, 4), ("auto", 50, 7), (0, 20, 0),
    (2, 3, 2), (19, 20, 19),
])
def test_how_many_themes(n_themes, n_components, expected):
    from sklearn_clda.inspection._hierarchy import themes_for

    assert themes_for(n_themes, n_components) == expected


def test_no_themes_and_bad_numbers_of_themes(small_corpus, tmp_path):
    X, groups, names = small_corpus
    model = CompoundLDA(n_components=4, max_iter=10, thin=1, random_state=0)
    model.fit(X, groups=groups)
    summary = write_report(model, X, names, tmp_path / "auto", groups=groups, figures=False)
    assert summary["themes"] is None and "themes.csv" not in summary["files"]
    assert "Themes:" not in (tmp_path / "auto" / "index.html").read_text(encoding="utf-8")
    for bad in (1, 4, 7):
        with pytest.raises(ValueError, match=f"n_themes={bad} cannot group 4 topics"):
            write_report(model, X, names, tmp_path / "bad", groups=groups, n_themes=bad,
                         figures=False)
    assert not (tmp_path / "bad").exists()
    with pytest.raises(ValueError, match="n_themes"):  # (InvalidParameterError)
        write_report(model, X, names, tmp_path / "bad", groups=groups, n_themes="some")


def test_the_map_data_ranks_words_as_topic_labels_does(small_corpus, tmp_path):
    """At every setting of the page's slider, each topic's candidate words
    ranked by the two logs the page reads give topic_labels' relevance
    words; the places keep the principal coordinates' distances."""
    from scipy.spatial.distance import pdist

    from sklearn_clda.inspection import topic_labels
    from sklearn_clda.inspection._map import topic_coordinates
    from sklearn_clda.report._map import LAMBDAS, MAX_RADIUS

    X, groups, names = small_corpus
    model = CompoundLDA(n_components=6, max_iter=30, thin=1, random_state=0)
    model.fit(X, groups=groups)
    summary = write_report(model, X, names, tmp_path / "r", groups=groups, top_words=4,
                           figures=False)
    data = summary["topic_map"]
    order = summary["topic_order"]
    assert data["topics"] == order and data["n_words"] == 4
    for lam in LAMBDAS:
        labels = topic_labels(model, names, method="relevance", relevance_lambda=lam,
                              n_words=4)["words"]
        for i, k in enumerate(order):
            ranked = sorted(data["words"][i], key=lambda w: (
                -(lam * w["log_phi"] + (1.0 - lam) * w["log_lift"]), w["index"]))
            assert [w["word"] for w in ranked[:4]] == labels[k], (lam, k)
    xy, explained = topic_coordinates(model.components_[order], "hellinger")
    drawn = np.column_stack([data["x"], -np.asarray(data["y"])])
    ratio = pdist(drawn) / pdist(xy)
    assert np.allclose(ratio, ratio[0])
    assert np.allclose(data["explained"], explained)
    assert np.allclose(data["radius"], MAX_RADIUS * np.sqrt(
        np.asarray(data["corpus"]) / data["peak"]))
    assert data["peak"] == pytest.approx(max(
        max(data["corpus"]), *(max(c["shares"]) for c in data["collections"])))
    page = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert page.count('class="map-topic"') == 6 and 'id="topic-map-data"' in page
    few = CompoundLDA(n_components=2, max_iter=10, thin=1, random_state=0).fit(X, groups=groups)
    assert write_report(few, X, names, tmp_path / "few", groups=groups,
                        figures=False)["topic_map"] is None
