"""``python -m sklearn_clda select``: numbers of topics compared on your documents."""

import csv
import os
import random
import sys

import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("pandas")

from numpy.testing import assert_allclose  # noqa: E402
from sklearn.feature_extraction.text import CountVectorizer  # noqa: E402

from sklearn_clda import CompoundLDA  # noqa: E402
from sklearn_clda.__main__ import main  # noqa: E402
from sklearn_clda.inspection import select_n_components  # noqa: E402
from sklearn_clda.report import load_documents  # noqa: E402

from _signals import interrupt_with_workers  # noqa: E402

THEMES = {
    "sport": "match goal team player coach season league striker referee stadium".split(),
    "money": "market stock bank investor profit shares trading inflation bonds dividend".split(),
    "science": "research cell protein experiment telescope galaxy physics molecule".split(),
}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
FAST = ["-n", "40", "--n-jobs", "1"]


@pytest.fixture(scope="module")
def docs_csv(tmp_path_factory):
    """90 documents, each of one outlet's theme: three topics."""
    rng = random.Random(0)
    path = tmp_path_factory.mktemp("input") / "docs.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["body", "outlet"])
        for outlet, words in THEMES.items():
            for _ in range(30):
                writer.writerow([" ".join(rng.choice(words) for _ in range(25)), outlet])
    return path


def _select(docs_csv, out, *extra):
    return main(["select", "--input", str(docs_csv), "--text-column", "body",
                 "--group-column", "outlet", "--out", str(out), *FAST, *extra])


def test_select_writes_the_comparison_of_select_n_components(docs_csv, tmp_path, capsys):
    assert _select(docs_csv, tmp_path / "out", "-k", "5,2,3") == 0
    printed = capsys.readouterr().out
    with open(tmp_path / "out" / "select_n_components.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [row["n_components"] for row in rows] == ["2", "3", "5"]
    # The numbers of select_n_components on the same counts, folds and seeds.
    docs = load_documents(docs_csv, "body", "outlet")
    X = CountVectorizer(stop_words="english", min_df=2, max_df=0.95).fit_transform(docs.texts)
    expected = select_n_components(
        CompoundLDA(max_iter=40, random_state=0), X, docs.groups, n_components=[2, 3, 5],
        cv=3, random_state=0)
    for name in ("perplexity", "coherence", "exclusivity", "stability", "stability_std"):
        assert_allclose([float(row[name]) for row in rows], expected[name], rtol=1e-12)
    # Three planted themes: three topics predict held-out words better than two.
    assert expected["perplexity"][1] < expected["perplexity"][0]
    assert (tmp_path / "out" / "select_n_components.png").read_bytes()[:8] == PNG_SIGNATURE
    table = printed.split("Done in")[1].split("\n", 1)[1]
    assert "K" in table and "stability" in table
    assert [line.split()[0] for line in table.splitlines()
            if line.strip()[:1].isdigit()] == ["2", "3", "5"]
    # The way on: the report on the same documents and vocabulary.
    assert ("report --input " + str(docs_csv) + " --text-column body --group-column "
            "outlet -k K") in printed


def test_seed_and_folds_reach_the_search(docs_csv, tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    assert _select(docs_csv, a, "-k", "2", "--seed", "1", "--folds", "2") == 0
    assert _select(docs_csv, b, "-k", "2", "--seed", "1", "--folds", "2") == 0
    assert _select(docs_csv, c, "-k", "2", "--seed", "2", "--folds", "2") == 0

    def perplexity(folder):
        with open(folder / "select_n_components.csv", encoding="utf-8") as fh:
            return float(next(csv.DictReader(fh))["perplexity"])

    assert perplexity(a) == perplexity(b) != perplexity(c)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["-k", "0,3"], "--n-components must be in [1,"),
        (["--folds", "1"], "--folds must be at least 2"),
        (["--folds", "31"], "--folds 31 is more than the documents of the largest "
                            "collection (30)"),
        (["--n-jobs", "0"], "--n-jobs must be a number of processes"),
        (["--max-iter", "1"], "--max-iter must be at least 2"),
        (["--min-df", "0"], "--min-df must be a number of documents"),
        (["--seed", "-1"], "--seed must be an integer in"),
        (["--text-column", "nope"], "nope"),
    ],
)
def test_bad_values_exit_2_with_one_line(docs_csv, tmp_path, capsys, argv, message):
    assert _select(docs_csv, tmp_path / "out", "-k", "2", *argv) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(errors) == 1 and "Traceback" not in errors[0]
    assert errors[0].startswith("python -m sklearn_clda select: error: ")
    assert message in errors[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["x", "2,b", ",", "1_0", "\u0663", "2.5"])
def test_k_must_be_numbers_of_topics(docs_csv, tmp_path, capsys, value):
    with pytest.raises(SystemExit) as exc:
        _select(docs_csv, tmp_path, "-k", value)
    assert exc.value.code == 2
    assert "numbers of topics" in capsys.readouterr().err


def test_output_problems_are_refused_before_fitting(docs_csv, tmp_path, capsys):
    taken = tmp_path / "file"
    taken.write_text("not a folder")
    assert _select(docs_csv, taken, "-k", "2") == 2
    assert "is an existing file" in capsys.readouterr().err
    out = tmp_path / "out"
    out.mkdir()
    target = tmp_path / "elsewhere.csv"
    os.symlink(target, out / "select_n_components.csv")
    assert _select(docs_csv, out, "-k", "2") == 2
    assert "symbolic link" in capsys.readouterr().err
    assert not target.exists()


def test_help_names_the_command(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "select --input PATH --out DIR" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["select", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "stm's searchK" in text and "select_n_components.csv" in text


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_stops_the_fits_and_their_workers(docs_csv, tmp_path):
    code, err, stopped, workers, left = interrupt_with_workers(
        ["select", "--input", str(docs_csv), "--text-column", "body", "--group-column",
         "outlet", "--out", str(tmp_path / "o"), "-k", "2,3", "-n", "10000000",
         "--n-jobs", "2"],
        "Vocabulary:", tmp_path)  # printed just before the fits
    assert code == 130, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == "python -m sklearn_clda select: interrupted"
    assert stopped < 15
    assert workers and not left
    assert not (tmp_path / "o").exists()


def test_small_collections_and_memory_are_said_in_notes(docs_csv, tmp_path, capsys,
                                                         monkeypatch):
    from sklearn_clda.report import _parallel

    # One collection of two documents (fewer than the 3 folds) beside three
    # of 30: a note instead of scikit-learn's and the fits' warnings.
    rows = list(csv.reader(open(docs_csv, encoding="utf-8")))
    path = tmp_path / "docs.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows + [[rows[1][0], "tiny"], [rows[2][0], "tiny"]])
    monkeypatch.setattr(_parallel, "MEMORY_SHARE", 1e-12)  # memory for one fit at a time
    assert _select(path, tmp_path / "out", "-k", "2", "--n-jobs", "2", "--seed", "7") == 0
    captured = capsys.readouterr()
    notes = [line for line in captured.err.splitlines() if ": note: " in line]
    assert any("1 collection(s) have fewer documents than --folds 3" in n for n in notes)
    assert any("2 fits at once would need about" in n for n in notes)
    assert "Warning" not in captured.err
    assert "--seed 7 -k K" in captured.out


def _write_docs(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["body", "outlet"])
        writer.writerows(rows)
    return path


def test_documents_without_words_are_left_out(tmp_path, capsys):
    # Four documents of words seen once (--min-df 2 drops them): with them
    # a fold could have no token to fit or to score.
    rng = random.Random(1)
    rows = [(" ".join(rng.choice(THEMES[o]) for _ in range(20)), o)
            for o in ("sport", "money") for _ in range(4)]
    rows += [(f"unique{i} single{i}", "sport") for i in range(4)]
    path = _write_docs(tmp_path / "docs.csv", rows)
    for seed in ("0", "1", "2"):
        assert _select(path, tmp_path / f"out{seed}", "-k", "2", "--folds", "2",
                       "--seed", seed) == 0
        err = capsys.readouterr().err
        assert "4 document(s) have no word left" in err and "they are left out" in err


def test_collections_too_small_to_split_are_named(tmp_path, capsys):
    path = _write_docs(tmp_path / "docs.csv", [("goal match team", "sport"),
                                               ("goal match bank", "money")])
    assert _select(path, tmp_path / "out", "-k", "2", "--min-df", "1") == 2
    err = capsys.readouterr().err
    assert "error: no collection has two documents with words" in err


def test_a_failed_write_leaves_the_earlier_comparison(docs_csv, tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    out = tmp_path / "out"
    assert _select(docs_csv, out, "-k", "2") == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    # The table is written (staged) first, then the figure fails.
    monkeypatch.setattr(Figure, "savefig", fail)
    assert _select(docs_csv, out, "-k", "3") == 2
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
