"""The report's covariates: ``--covariate-column`` read from the documents'
files, and the page's section on how each moves the topics' shares."""

import contextlib
import csv
import io
import json
import math
import random
from datetime import datetime

import numpy as np
import pytest

pytest.importorskip("matplotlib")
pd = pytest.importorskip("pandas")

from matplotlib.image import imread  # noqa: E402

from sklearn_clda import CompoundLDA  # noqa: E402
from sklearn_clda.__main__ import main  # noqa: E402
from sklearn_clda.inspection import topic_effects  # noqa: E402
from sklearn_clda.report import InputError, load_documents, write_report  # noqa: E402
from sklearn_clda.report._covariate_effects import change, span  # noqa: E402
from sklearn_clda.report._covariates import decimal_year  # noqa: E402

THEMES = {
    "sport": "match goal team player coach season league striker referee stadium".split(),
    "money": "market stock bank investor profit shares trading inflation bonds dividend".split(),
    "science": "research cell protein experiment telescope galaxy physics molecule genome".split(),
}


def _documents(n_docs=240, seed=0):
    """Texts whose sport share rises with their year (from 10% in 2000 to
    90% in 2020), a flag unrelated to them, and two outlets; every 20th
    document has no year."""
    rng = random.Random(seed)
    rows = []
    for i in range(n_docs):
        year = 2000 + rng.randint(0, 20)
        sport = 0.1 + 0.8 * (year - 2000) / 20
        words = []
        for _ in range(rng.randint(40, 60)):
            u = rng.random()
            theme = "sport" if u < sport else "money" if u < sport + (1 - sport) / 2 else "science"
            words.append(rng.choice(THEMES[theme]))
        rows.append({"text": " ".join(words), "outlet": rng.choice(["North", "South"]),
                     "year": "" if i % 20 == 7 else str(year), "flag": str(rng.randint(0, 1))})
    return rows


def _write_csv(path, rows, columns=("text", "outlet", "year", "flag")):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns)
        for row in rows:
            writer.writerow([row[c] for c in columns])
    return path


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


REPORT = ["--group-column", "outlet", "-k", "3", "-n", "200", "--no-progress",
          "--time-budget", "0"]


@pytest.fixture(scope="module")
def covariate_report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("covariates")
    rows = _documents()
    path = _write_csv(tmp / "docs.csv", rows)
    out = tmp / "report"
    code, stdout, stderr = _run(["report", "--input", str(path), "--out", str(out),
                                 "--covariate-column", "year", "--covariate-column", "flag",
                                 *REPORT])
    return {"code": code, "stdout": stdout, "stderr": stderr, "out": out, "rows": rows,
            "path": path}


# ---------------------------------------------------------------------------
# Reading the cells
# ---------------------------------------------------------------------------


def test_a_date_is_its_year_and_the_share_of_the_year_gone_by():
    assert decimal_year(datetime(2021, 7, 1)) == 2021 + 181 / 365
    assert decimal_year(datetime(2020, 12, 31, 12)) == 2020 + 365.5 / 366
    assert decimal_year(datetime.fromisoformat("2021-07-01T00:00:00+05:00")) == 2021 + 181 / 365


def test_covariate_cells_are_numbers_dates_or_missing(tmp_path):
    path = tmp_path / "docs.csv"
    path.write_text(
        "text,group,year,score\n"
        "goals and matches,sport,2020,1.5\n"
        "rates and bonds,money,2021-07-01,NA\n"
        "cells and genes,science, n/a ,-2e1\n"
        ",sport,1999,3\n"                      # no text: skipped, its cells unread
        "stocks and goals,money,2019-01-01 12:00,\n", encoding="utf-8")
    docs = load_documents(path, covariate_columns=["year", "score"])
    assert docs.texts[0] == "goals and matches" and len(docs.texts) == 4
    np.testing.assert_array_equal(docs.covariates["year"],
                                  [2020, 2021 + 181 / 365, np.nan, 2019 + 0.5 / 365])
    np.testing.assert_array_equal(docs.covariates["score"], [1.5, np.nan, -20.0, np.nan])
    notes = " | ".join(docs.notes)
    assert "1 document(s) have no value in column 'year' (line 4)" in notes
    assert "2 document(s) have no value in column 'score' (line 3, line 6)" in notes
    assert "column 'year' holds dates, read as decimal years" in notes
    assert list(docs.covariates) == ["year", "score"]
    assert load_documents(path).covariates == {}


def test_json_covariates_take_numbers_booleans_and_null(tmp_path):
    path = tmp_path / "docs.jsonl"
    lines = [{"text": "goals and matches", "group": "a", "year": 2020, "flag": True},
             {"text": "rates and bonds", "group": "b", "year": None, "flag": False},
             {"text": "cells and genes", "group": "a", "year": "2021", "flag": 1}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"text": "x y", '
                    '"group": "b", "year": NaN}\n', encoding="utf-8")
    docs = load_documents(path, covariate_columns=("year", "flag"))
    np.testing.assert_array_equal(docs.covariates["year"], [2020, np.nan, 2021, np.nan])
    np.testing.assert_array_equal(docs.covariates["flag"], [1, 0, 1, np.nan])


@pytest.mark.parametrize("cell, message", [
    ("abc", "line 3: column 'year' holds 'abc', not a number or an ISO date"),
    ("2021-13-01", "holds '2021-13-01', not a number or an ISO date"),
    ("1,000", "holds '1,000', not a number"),
    ("inf", "holds 'inf', not a number"),
    ("1e999", "holds '1e999', too large for a number"),
    ("x" * 100, "holds '" + "x" * 39 + "\u2026', not a number"),
])
def test_a_cell_that_is_no_number_is_named_with_its_line(tmp_path, cell, message):
    path = tmp_path / "docs.csv"
    _write_csv(path, [{"text": "goals", "outlet": "a", "year": "2020"},
                      {"text": "bonds", "outlet": "b", "year": cell}], ("text", "outlet", "year"))
    with pytest.raises(InputError) as exc:
        load_documents(path, "text", "outlet", ["year"])
    assert message in str(exc.value)


@pytest.mark.parametrize("covariates, kind, message", [
    (["year"], "folder", "a folder of .txt files, which has no columns for --covariate-column"),
    (["yr"], "csv", "no column 'yr' (set it with --covariate-column)"),
    (["group"], "csv", "'group' is given as --covariate-column and --group-column"),
    (["year", "year"], "csv", "'year' is given as --covariate-column twice"),
    (["empty"], "csv", "column 'empty' (--covariate-column) has no value in any document"),
    (["year"], "json-object", "column 'year' holds a JSON object, not a number"),
])
def test_covariate_columns_that_cannot_be_read(tmp_path, covariates, kind, message):
    if kind == "folder":
        (tmp_path / "docs" / "a").mkdir(parents=True)
        (tmp_path / "docs" / "a" / "one.txt").write_text("goals", encoding="utf-8")
        path = tmp_path / "docs"
    elif kind == "csv":
        path = tmp_path / "docs.csv"
        path.write_text("text,group,year,empty\ngoals,a,2020,\nbonds,b,2021,NA\n",
                        encoding="utf-8")
    else:
        path = tmp_path / "docs.jsonl"
        path.write_text('{"text": "goals", "group": "a", "year": {"y": 1}}\n', encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_documents(path, covariate_columns=covariates)
    assert message in str(exc.value)


@pytest.mark.parametrize("values, expected", [
    (np.arange(2000, 2021, dtype=float), (2002.0, 2018.0, "10th to 90th percentile")),
    (np.array([0.0, 1, 1, 0, 1]), (0.0, 1.0, "lowest to highest value")),
    (np.r_[np.zeros(20), 1.0, 5.0], (0.0, 5.0, "lowest to highest value")),
])
def test_a_slope_s_change_is_over_the_middle_eighty_percent_or_both_values(values, expected):
    assert span(values) == expected


def test_a_change_over_the_widest_span_stays_finite():
    """(The width of -1e308 to 1e308 overflows; its two products do not.)"""
    assert change(2.5e-309, -1e308, 1e308) == pytest.approx(0.5, rel=1e-9)
    assert change(-0.01, 2000.0, 2020.0) == pytest.approx(-0.2)


# ---------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------


def _sport_topic(summary):
    """The topic whose label words are most the sport theme's."""
    return max(range(summary["n_components"]), key=lambda k: sum(
        word in THEMES["sport"] for word in summary["topics"][k]["top_words"]))


def test_the_report_finds_the_topic_the_year_moves(covariate_report):
    assert covariate_report["code"] == 0, covariate_report["stderr"]
    out = covariate_report["out"]
    assert "12 document(s) have no value in column 'year'" in covariate_report["stderr"]
    summary = json.loads((out / "report.json").read_text(encoding="utf-8"))
    section = summary["covariates"]
    assert [term["name"] for term in section["terms"]] == ["year", "flag"]
    assert section["n_documents"] == 228 and section["n_left_out"] == 12
    year, flag = section["terms"]
    years = [float(row["year"]) for row in covariate_report["rows"] if row["year"]]
    assert (year["low"], year["high"], year["span"]) == (
        *np.percentile(years, [10, 90]), "10th to 90th percentile")
    sport = _sport_topic(summary)
    rows = {row["topic"]: row for row in year["rows"]}
    # the sport share rises by 0.8 * 15 / 20 = 60 points from 2002 to 2017
    assert rows[sport]["verdict"] == "clear" and 0.4 < rows[sport]["change"] < 1.0
    assert year["rows"][0]["topic"] == sport  # the steepest rise first
    assert [row["estimate"] for row in year["rows"]] == sorted(
        (row["estimate"] for row in year["rows"]), reverse=True)
    assert year["n_up"] >= 1 and year["n_down"] >= 1
    assert (flag["low"], flag["high"]) == (0.0, 1.0)
    assert sum(row["verdict"] == "clear" for row in flag["rows"]) <= 1


def test_the_page_shows_the_section_figure_and_table(covariate_report):
    out = covariate_report["out"]
    page = (out / "index.html").read_text(encoding="utf-8")
    assert '<a href="#covariates">How the covariates move the topics</a>' in page
    section = page[page.index('<section id="covariates">'):]
    section = section[:section.index("</section>")]
    assert "(year, flag)" in section and "228 documents" in section
    assert "12 without" in section and "with the others held fixed" in section
    assert '<img src="topic_effects.png"' in section
    assert "year <span" in section and "from 2002 to\n2017 (10th to 90th percentile)" in section
    assert section.count('<span class="clear">clear</span>') >= 2
    assert '<a href="topic_effects.csv" download>' in section
    image = imread(out / "topic_effects.png")
    assert image.shape[1] > image.shape[0] > 250  # two panels side by side
    assert np.any(image[..., :3] < 0.9, axis=-1).mean() > 0.02


def test_a_covariate_of_many_values_gets_its_curves(covariate_report):
    """The year (21 values) gets a curve per topic, the flag (2) none; the
    sport topic's share is clearly higher at the end than at the start."""
    out = covariate_report["out"]
    summary = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert summary["covariates"]["curves"] == ["year"]
    curves = pd.read_csv(out / "topic_share_curves.csv")
    assert curves.columns.tolist() == ["covariate", "topic", "label_words", "value",
                                       "estimate", "std_error", "lower", "upper"]
    assert set(curves.covariate) == {"year"} and len(curves) == 3 * 50
    sport = curves[curves.topic == _sport_topic(summary)]
    assert sport.lower.iloc[-1] > sport.upper.iloc[0] + 0.2
    page = (out / "index.html").read_text(encoding="utf-8")
    assert '<img src="topic_share_curves.png"' in page and "Along year: the shares" in page
    image = imread(out / "topic_share_curves.png")
    assert image.shape[0] > 250 and np.any(image[..., :3] < 0.9, axis=-1).mean() > 0.02


def test_the_csv_holds_the_effects_of_topic_effects(covariate_report):
    """The report's numbers are topic_effects' on the documents with a
    year (the rows of the CSV table, with the intercept), seeded with 0."""
    out, rows = covariate_report["out"], covariate_report["rows"]
    import joblib

    pipeline = joblib.load(out / "model.joblib")
    kept = [row for row in rows if row["year"]]
    table = topic_effects(pipeline, [row["text"] for row in kept],
                          {"year": [float(row["year"]) for row in kept],
                           "flag": [float(row["flag"]) for row in kept]},
                          [row["outlet"] for row in kept], ci=0.9, random_state=0)
    # (read as text, then as Python reads numbers: exact, whatever pandas'
    # own parser rounds, which differed in pandas 1.5)
    csv_table = pd.read_csv(out / "topic_effects.csv", dtype=str, keep_default_na=False)
    assert csv_table.columns.tolist() == [
        "topic", "label_words", "term", "estimate", "std_error", "lower", "upper", "p_value",
        "low", "high", "change", "change_lower", "change_upper"]
    for column in csv_table.columns.drop(["label_words", "term"]):
        csv_table[column] = [float(v) if v else np.nan for v in csv_table[column]]
    for column in ("topic", "term", "estimate", "std_error", "lower", "upper", "p_value"):
        np.testing.assert_array_equal(csv_table[column], table[column], err_msg=column)
    slopes = csv_table[csv_table.term == "year"]
    np.testing.assert_allclose(slopes.change, slopes.estimate * (slopes.high - slopes.low))
    assert (slopes.high - slopes.low == 15).all()
    assert csv_table[csv_table.term == "intercept"].change.isna().all()


def test_bad_covariates_end_the_command_before_the_fit(tmp_path):
    rows = _documents(40)
    for row in rows:
        row["constant"], row["name"] = "3", "x"
    path = _write_csv(tmp_path / "docs.csv", rows,
                      ("text", "outlet", "year", "flag", "constant", "name"))
    for argv, message in [
        (["--covariate-column", "constant"], "--covariate-column: covariates passed to the "
         "report: column 'constant' is determined by the columns before it (with the "
         "intercept)"),
        (["--covariate-column", "name"], "column 'name' holds 'x', not a number"),
        (["--covariate-column", "year"] * 9, "--covariate-column is given 9 times; the "
         "report takes up to 8"),
    ]:
        code, stdout, stderr = _run(["report", "--input", str(path), "--out",
                                     str(tmp_path / "out"), *argv, *REPORT])
        assert code == 2 and "Fitting" not in stdout, stderr
        assert stderr.count("error:") == 1 and message in stderr, stderr
        assert not (tmp_path / "out").exists()


def test_covariates_too_small_to_regress_on_end_the_command_in_a_line(tmp_path):
    rows = _documents(40)
    for i, row in enumerate(rows):
        row["tiny"] = f"{i % 3}e-310"
    path = _write_csv(tmp_path / "docs.csv", rows, ("text", "outlet", "tiny"))
    code, stdout, stderr = _run(["report", "--input", str(path), "--out", str(tmp_path / "out"),
                                 "--covariate-column", "tiny", *REPORT])
    assert code == 2 and stderr.count("error:") == 1, stderr
    assert "are so small that their coefficients overflow" in stderr
    assert not (tmp_path / "out" / "index.html").exists()


@pytest.fixture(scope="module")
def small_fit():
    rows = _documents(60, seed=1)
    from sklearn.feature_extraction.text import CountVectorizer

    X = CountVectorizer().fit_transform([row["text"] for row in rows])
    groups = [row["outlet"] for row in rows]
    model = CompoundLDA(n_components=3, max_iter=40, random_state=0).fit(X, groups=groups)
    years = np.array([float(row["year"]) if row["year"] else np.nan for row in rows])
    return model, X, groups, years


@pytest.mark.parametrize("covariates, message", [
    (lambda years: {"year": years[:-1]}, "covariates have 59 rows but X has 60"),
    (lambda years: {f"c{i}": years for i in range(9)}, "1 to 8 columns"),
    (lambda years: {"intercept": years}, "other than 'intercept'"),
    (lambda years: {"year": np.where(np.isnan(years), np.inf, years)}, "infinite value in "
     "column 'year'"),
    (lambda years: {"year": np.where(np.isnan(years), "unknown", "known")},
     "covariates must be numbers"),
    (lambda years: {"year": years, "again": years}, "column 'again' is determined by the "
     "columns before it"),
])
def test_write_report_names_bad_covariates_and_writes_nothing(small_fit, tmp_path, covariates,
                                                              message):
    model, X, groups, years = small_fit
    with pytest.raises(ValueError, match="covariates") as exc:
        write_report(model, X, [f"w{i}" for i in range(X.shape[1])], tmp_path / "out",
                     groups=groups, covariates=covariates(years), figures=False)
    assert message in str(exc.value)
    assert not (tmp_path / "out").exists()


def test_a_report_without_covariates_drops_the_old_effects(small_fit, tmp_path):
    model, X, groups, years = small_fit
    names = [f"w{i}" for i in range(X.shape[1])]
    frame = pd.DataFrame({"year": years})
    summary = write_report(model, X, names, tmp_path, groups=groups, covariates=frame,
                           figures=False)
    assert "topic_effects.csv" in summary["files"]
    assert summary["covariates"]["n_left_out"] == int(np.isnan(years).sum())
    assert math.isclose(summary["covariates"]["by_chance"], 0.3)
    assert summary["covariates"]["curves"] == ["year"]
    summary = write_report(model, X, names, tmp_path, groups=groups, figures=False)
    assert summary["covariates"] is None and not (tmp_path / "topic_effects.csv").exists()
    assert not (tmp_path / "topic_share_curves.csv").exists()
    assert 'id="covariates"' not in (tmp_path / "index.html").read_text(encoding="utf-8")


def test_a_covariate_whose_spline_has_no_documents_gets_a_note_not_a_curve(small_fit,
                                                                          tmp_path):
    """Eleven values near 0 and one at 100: the spline's middle pieces have
    no document; the slope is still given."""
    model, X, groups, years = small_fit
    gappy = np.r_[np.arange(59) % 11 / 100, 100.0]
    summary = write_report(model, X, [f"w{i}" for i in range(X.shape[1])], tmp_path,
                           groups=groups, covariates={"gappy": gappy}, figures=False)
    section = summary["covariates"]
    assert section["curves"] == [] and [t["name"] for t in section["terms"]] == ["gappy"]
    assert any(note.startswith("no curve along 'gappy': ") and "too few documents" in note
               for note in section["notes"]), section["notes"]
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "No curve along &#39;gappy&#39;" in page and 'src="topic_share_curves' not in page
