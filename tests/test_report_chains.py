"""The report over several chains: ``write_report(chains=...)``,
``extend_chain`` of a list of fits and ``report --chains N``."""

import csv
import json
import os
import sys

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from sklearn_clda import CompoundLDA  # noqa: E402
from sklearn_clda.__main__ import _extension_outcome, main  # noqa: E402
from sklearn_clda.datasets import make_compound_corpus  # noqa: E402
from sklearn_clda.inspection import (  # noqa: E402
    align_chains,
    collection_topic_summary,
    compare_collections,
)
from sklearn_clda.report import extend_chain, write_report  # noqa: E402

from _signals import interrupt_with_workers  # noqa: E402

pytest.importorskip("pandas")
pytest.importorskip("jinja2")

WORDS = [f"w{i}" for i in range(30)]


@pytest.fixture(scope="module")
def corpus():
    return make_compound_corpus(n_topics=3, n_features=30, n_collections=2,
                                docs_per_collection=40, doc_length=50, random_state=0)


def _fits(corpus, max_iter, seeds=(0, 1, 2)):
    return [CompoundLDA(n_components=3, max_iter=max_iter, thin=2, random_state=seed)
            .fit(corpus.data, groups=corpus.groups) for seed in seeds]


@pytest.fixture(scope="module")
def chains(corpus):
    return _fits(corpus, 200)


def _page(folder):
    return " ".join((folder / "index.html").read_text(encoding="utf-8").split())


def test_the_report_pools_the_chains_lined_up(corpus, chains, tmp_path):
    """The page's proportions, intervals, R-hat and comparisons are those of
    the chains' lined-up draws pooled, as the inspection API gives them."""
    summary = write_report(chains[0], corpus.data, WORDS, tmp_path, groups=corpus.groups,
                           chains=chains[1:])
    lined = align_chains(chains)
    assert lined.permutations[1:].tolist() != [[0, 1, 2]] * 2  # the topics did move
    pooled = collection_topic_summary(chains, ci=0.9)
    with open(tmp_path / "collection_topics.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for key in ["lower", "upper", "ess", "rhat"]:
        np.testing.assert_allclose([float(row[key]) for row in rows], pooled[key], rtol=1e-9)
    # pi: each chain's own estimate in the first chain's topic order, averaged
    pi = np.mean([fit.collection_topic_[:, perm]
                  for fit, perm in zip(chains, lined.permutations)], axis=0)
    np.testing.assert_allclose(summary["collection_topic"]["mean"], pi)
    a, b = chains[0].groups_
    diff = compare_collections(chains, a, b)
    rows = summary["comparisons"]["pairs"][0]["rows"]
    by_topic = {row["topic"]: row for row in rows}
    np.testing.assert_allclose([by_topic[k]["lower"] for k in range(3)], diff["lower"])
    diag = summary["diagnostics"]
    assert diag["n_chains"] == 3 and diag["chain_seeds"] == [0, 1, 2]
    assert diag["n_draws"] == 3 * chains[0].collection_topic_samples_.shape[0]
    assert diag["unstable_topics"] == []
    assert diag["sampler_seconds"] == pytest.approx(
        sum(fit.trace_["seconds"][-1] for fit in chains))
    page = _page(tmp_path)
    assert "pooled over 3 chains whose topics were matched" in page
    assert "R-hat of &pi; (the chains, each split in two halves)" in page
    assert "(random_state 0, 1, 2), their draws pooled" in page
    assert "&Dagger;" not in page
    assert "one chain" not in page.split('id="diagnostics"')[1]


def test_themes_pool_the_chains_lined_up(corpus, chains, tmp_path):
    """A theme's interval comes from the lined-up chains' draws of its
    topics, summed: what collection_topic_summary gives for the chains."""
    from sklearn_clda.inspection import topic_themes

    summary = write_report(chains[0], corpus.data, WORDS, tmp_path, groups=corpus.groups,
                           chains=chains[1:], n_themes=2, figures=False)
    themes = topic_themes(chains[0], 2, WORDS)
    pooled = collection_topic_summary(chains, ci=0.9, topic_groups=themes)
    got = summary["themes"]
    assert [row["topics"] for row in got["rows"]] == list(themes.values())
    for j, label in enumerate(chains[0].groups_):
        for t, name in enumerate(themes):
            row = pooled[(pooled["collection"] == label) & (pooled["topic"] == name)].iloc[0]
            assert got["lower"][j][t] == pytest.approx(row["lower"], rel=1e-9)
            assert got["upper"][j][t] == pytest.approx(row["upper"], rel=1e-9)
            assert got["rhat"][j][t] == pytest.approx(row["rhat"], rel=1e-9)
    assert not any(row["unstable"] for row in got["rows"])


def test_pooled_intervals_are_wider_than_one_chain_s(corpus, tmp_path):
    """Chains stopped early settle apart: their pooled intervals span them."""
    early = _fits(corpus, 60)
    one = write_report(early[0], corpus.data, WORDS, tmp_path / "one", groups=corpus.groups,
                       figures=False)
    pooled = write_report(early[0], corpus.data, WORDS, tmp_path / "all",
                          groups=corpus.groups, chains=early[1:], figures=False)
    width = [np.subtract(s["collection_topic"]["upper"], s["collection_topic"]["lower"])
             for s in (one, pooled)]
    assert np.median(width[1] / width[0]) > 1.2


def test_a_topic_some_chain_lacks_is_marked(corpus, tmp_path):
    """After 100 sweeps one chain has not yet told the first chain's topic 0
    apart (the align_chains example): the page marks that topic."""
    early = _fits(corpus, 100)
    assert align_chains(early).unstable.tolist() == [0]
    summary = write_report(early[0], corpus.data, WORDS, tmp_path, groups=corpus.groups,
                           chains=early[1:], figures=False)
    assert summary["diagnostics"]["unstable_topics"] == [0]
    assert [t["unstable"] for t in summary["topics"]] == [True, False, False]
    assert summary["topics"][0]["chain_distance"] > 0.5
    page = _page(tmp_path)
    assert "marks the 1 topic that some of the 3 chains did not find" in page
    # the topic table and the table of proportions flag topic 0, and only it
    assert page.count('<td class="num" data-sort="0">0<span class="dagger" title="some '
                      'chain has no topic close') == 2
    assert 'data-sort="1">1<span class="dagger"' not in page
    with open(tmp_path / "topics.csv", newline="", encoding="utf-8") as fh:
        flags = {row["topic"]: row["unstable"] for row in csv.DictReader(fh)}
    assert flags == {"0": "True", "1": "False", "2": "False"}


def test_one_fit_keeps_the_one_chain_page(corpus, chains, tmp_path):
    summary = write_report(chains[0], corpus.data, WORDS, tmp_path, groups=corpus.groups,
                           figures=False)
    assert summary["diagnostics"]["n_chains"] == 1
    assert all(t["chain_distance"] is None and not t["unstable"] for t in summary["topics"])
    page = _page(tmp_path)
    assert "R-hat of &pi; (the chain's two halves)" in page and "pooled over" not in page


def test_chains_that_are_not_chains_of_the_model_are_refused(corpus, chains, tmp_path):
    X, groups = corpus.data, corpus.groups
    four = CompoundLDA(n_components=4, max_iter=200, thin=2, random_state=5).fit(
        X, groups=groups)
    fewer = CompoundLDA(n_components=3, max_iter=200, thin=2, random_state=5).fit(
        X[10:], groups=groups[10:])
    for others, message in [
        ([chains[0]], "got the same fitted model twice"),
        ([chains[1], chains[1]], "got the same fitted model twice"),
        ([four], "fit 0 has 3 topics, fit 1 has 4"),
        ([fewer], r"chains\[0\] was not fitted on the model's data"),
        ([CompoundLDA(n_components=3)], "not fitted"),
    ]:
        out = tmp_path / "r"
        with pytest.raises(ValueError, match=message):
            write_report(chains[0], X, WORDS, out, groups=groups, chains=others)
        assert not out.exists()
    with pytest.raises(ValueError, match="'chains' parameter of write_report must be"):
        write_report(chains[0], X, WORDS, tmp_path / "r", groups=groups, chains=chains[1])


def test_extend_chain_runs_every_chain_the_same_sweeps(corpus):
    """A list of chains runs further together; the ESS is their multi-chain one."""
    from sklearn_clda.inspection import effective_sample_size

    fits = _fits(corpus, 40, seeds=(0, 1))
    info = extend_chain(fits, corpus.data, corpus.groups, min_ess=150, time_budget=60)
    assert info["reached"] and info["rounds"] >= 1
    assert fits[0].n_iter_ == fits[1].n_iter_ == info["sweeps_after"] > 40
    ess = effective_sample_size(align_chains(fits).draws, multichain=True)
    assert info["ess_after"] == pytest.approx(np.min(ess))
    # the pooled ESS is not one chain's: the first alone has fewer
    assert np.min(effective_sample_size(fits[0].collection_topic_samples_)) < info["ess_after"]


def test_extend_chain_refuses_chains_at_other_sweeps(corpus, chains):
    longer = CompoundLDA(n_components=3, max_iter=240, thin=2, random_state=7).fit(
        corpus.data, groups=corpus.groups)
    before = dict(vars(longer))
    with pytest.raises(ValueError, match=r"chain 0 has \(n_iter_, burn_in_, thin\) = "
                                         r"\(200, 100, 2\), chain 1 has \(240, 120, 2\)"):
        extend_chain([chains[0], longer], corpus.data, corpus.groups, time_budget=5)
    assert all(vars(longer)[k] is v for k, v in before.items())
    with pytest.raises(ValueError, match="got the same fitted model twice"):
        extend_chain([chains[0], chains[0]], corpus.data, corpus.groups, time_budget=5)
    with pytest.raises(ValueError, match="empty list of chains"):
        extend_chain([], corpus.data, corpus.groups, time_budget=5)


def test_the_stall_of_several_chains_is_said_as_disagreement():
    extension = {"reached": False, "stalled": True}
    assert "they disagree" in _extension_outcome(extension, 3)
    assert "--chains" in _extension_outcome(extension, 1)


def _documents(path):
    rng = np.random.default_rng(0)
    themes = {"x": "apple banana cherry fruit juice sweet".split(),
              "y": "engine wheel car road drive fuel".split()}
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["text", "group"])
        for group in ["x", "y"]:
            for _ in range(30):
                words = rng.choice(themes[group] * 3 + themes["x"] + themes["y"], 25)
                writer.writerow([" ".join(words), group])
    return path


def test_report_command_fits_and_pools_several_chains(tmp_path, capsys):
    """--chains 3 fits seeds 4, 5, 6; at once in processes (--n-jobs 2) or
    one after another, with the same report."""
    source = _documents(tmp_path / "docs.csv")
    summaries = []
    for jobs, said in [("2", "3 chains (seeds 4 to 6), 2 at a time, each in its own process"),
                       ("1", "Chain 3 of 3 (seed 6)...")]:
        out = tmp_path / f"r{jobs}"
        code = main(["report", "--input", str(source), "--out", str(out), "-k", "2",
                     "-n", "60", "--chains", "3", "--seed", "4", "--time-budget", "2",
                     "--n-jobs", jobs, "--no-progress", "--no-figures"])
        assert code == 0
        assert said in capsys.readouterr().out
        summaries.append(json.loads((out / "report.json").read_text(encoding="utf-8")))
    for summary in summaries:
        assert summary["diagnostics"]["n_chains"] == 3
        assert summary["diagnostics"]["chain_seeds"] == [4, 5, 6]
        assert summary["model"]["random_state"] == 4
    # the budget may end after other numbers of sweeps: compare what both ran
    parallel, serial = (s["diagnostics"]["extension"] for s in summaries)
    if parallel["sweeps_after"] == serial["sweeps_after"]:
        assert summaries[0]["collection_topic"] == summaries[1]["collection_topic"]


def test_chains_fitted_at_once_are_the_chains_fitted_one_after_another(corpus):
    from sklearn_clda.report._parallel import fit_chain, map_chains

    fits = [CompoundLDA(n_components=3, max_iter=60, thin=2, random_state=seed)
            for seed in range(3)]
    map_chains(fit_chain, fits, 2, corpus.data, corpus.groups)
    for seed, fit in enumerate(fits):
        alone = CompoundLDA(n_components=3, max_iter=60, thin=2, random_state=seed).fit(
            corpus.data, groups=corpus.groups)
        np.testing.assert_array_equal(fit.collection_topic_samples_,
                                      alone.collection_topic_samples_)
        np.testing.assert_array_equal(fit.components_, alone.components_)


def test_chains_run_further_at_once_as_one_after_another(corpus):
    """Kept chains continued in worker processes come back into the same
    objects, in the state the same sweeps give in this process."""
    from sklearn_clda.report._extend import _run_to
    from sklearn_clda.report._parallel import map_chains

    def kept_chains():
        return [CompoundLDA(n_components=3, max_iter=40, thin=2, warm_start=True,
                            random_state=seed).fit(corpus.data, groups=corpus.groups)
                for seed in (0, 1)]

    at_once, in_turn = kept_chains(), kept_chains()
    objects = list(at_once)
    map_chains(_run_to, at_once, 2, corpus.data, corpus.groups, 100)
    for fit in in_turn:
        _run_to(fit, corpus.data, corpus.groups, 100)
    assert all(a is b for a, b in zip(at_once, objects))
    for a, b in zip(at_once, in_turn):
        assert a.n_iter_ == b.n_iter_ == 100
        np.testing.assert_array_equal(a.collection_topic_samples_, b.collection_topic_samples_)
    info = extend_chain(at_once, corpus.data, corpus.groups, min_ess=1e9, time_budget=1,
                        n_jobs=2)
    assert at_once[0].n_iter_ == at_once[1].n_iter_ == info["sweeps_after"]


@pytest.mark.parametrize("argv, message", [
    (["--chains", "0"], "--chains must be in [1, 16], got 0"),
    (["--n-jobs", "0"], "--n-jobs must be a number of processes >= 1, or -1 for one per core"),
    (["--chains", "17"], "--chains must be in [1, 16], got 17"),
    (["--chains", "2", "--seed", "4294967295"],
     "--seed 4294967295 with --chains 2 needs seeds past 4294967295"),
])
def test_report_command_refuses_bad_chain_counts(argv, message, tmp_path, capsys):
    source = _documents(tmp_path / "docs.csv")
    code = main(["report", "--input", str(source), "--out", str(tmp_path / "r"), *argv])
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and not (tmp_path / "r").exists()


@pytest.mark.parametrize("lower, upper, ess, agree, expected", [
    (0.01, 0.05, 150.0, True, "clear"), (-0.01, 0.05, 150.0, False, "uncertain"),
    (0.01, 0.05, 20.0, True, "every chain"), (0.01, 0.05, 20.0, False, "few draws"),
    (0.01, 0.05, None, True, "every chain"),
])
def test_a_direction_every_chain_agrees_on_is_said_as_such(lower, upper, ess, agree,
                                                            expected):
    from sklearn_clda.report._summary import verdict

    assert verdict(lower, upper, ess, agree) == expected


def test_chains_agree_only_when_each_chain_s_interval_is_on_one_side():
    from sklearn_clda.inspection._collections import chains_agree

    rng = np.random.default_rng(0)
    noise = rng.normal(0, 0.01, size=(3, 200, 4))
    # topic 0: every chain above 0; 1: every chain below; 2: one chain
    # straddles 0; 3: chains on opposite sides
    centres = np.array([[0.2, -0.1, 0.3, 0.2], [0.4, -0.3, 0.0, -0.2], [0.1, -0.2, 0.2, 0.1]])
    diff = centres[:, None, :] + noise
    assert chains_agree(diff, 0.9, np.array([], dtype=int)).tolist() == [
        True, True, False, False]
    assert chains_agree(diff, 0.9, np.array([1])).tolist() == [True, False, False, False]
    assert chains_agree(diff[:1], 0.9, np.array([], dtype=int)) is None


def test_chains_settled_apart_agree_on_a_direction(corpus, tmp_path):
    """Two chains whose draws sit apart pool to a few effective draws: no
    difference is clear, but those on the same side in both are marked."""
    rng = np.random.default_rng(1)
    fits = _fits(corpus, 200, seeds=(0, 0))  # the same topics, in the same order
    places = [np.array([[0.5, 0.3, 0.2], [0.3, 0.3, 0.4]]),
              np.array([[0.6, 0.25, 0.15], [0.2, 0.35, 0.45]])]
    for fit, place in zip(fits, places):
        draws = place + rng.normal(0, 0.005, size=(100, 2, 3))
        fit.collection_topic_samples_ = draws / draws.sum(axis=2, keepdims=True)
    summary = write_report(fits[0], corpus.data, WORDS, tmp_path, groups=corpus.groups,
                           chains=fits[1:], figures=False)
    rows = summary["comparisons"]["pairs"][0]["rows"]
    by_topic = {row["topic"]: row for row in rows}
    assert all(row["ess"] < 100 for row in rows)
    # a - b: topic 0 is +0.2 and +0.4, topic 2 -0.2 and -0.3, topic 1 0 and -0.1
    assert [by_topic[k]["verdict"] for k in range(3)] == ["every chain", "few draws",
                                                          "every chain"]
    assert [by_topic[k]["chains_agree"] for k in range(3)] == [True, False, True]
    page = _page(tmp_path)
    assert "With 2 chains, a difference on fewer effective draws is marked" in page
    assert page.count(">every chain</span>") >= 2


def test_the_demo_pools_chains_only_in_its_report(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--chains", "2", "-n", "4"])
    assert exc.value.code == 2
    assert "--chains pools several fits in the report: give --report DIR too" in (
        capsys.readouterr().err)
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "--chains N" in capsys.readouterr().out


def test_the_log_likelihood_figure_draws_every_chain(chains):
    import matplotlib.pyplot as plt

    from sklearn_clda.report._figures import _trace

    display = _trace(chains)
    panel = display.axes_.ravel()[0]
    labels = [line.get_label() for line in panel.get_lines()
              if line.get_label().startswith("chain")]
    assert labels == ["chain 1 (seed 0)", "chain 2 (seed 1)", "chain 3 (seed 2)"]
    plt.close(display.figure_)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_stops_chains_fitted_at_once(tmp_path):
    """Chains in worker processes stop with the command: exit 130 at once,
    no worker left running."""
    source = _documents(tmp_path / "docs.csv")
    code, err, stopped, workers, left = interrupt_with_workers(
        ["report", "--input", str(source), "--out", str(tmp_path / "r"), "-k", "2",
         "-n", "10000000", "--chains", "2", "--n-jobs", "2", "--no-progress"],
        "2 at a time, each in its own process", tmp_path)
    assert code == 130, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == "python -m sklearn_clda report: interrupted"
    assert stopped < 15
    assert workers and not left
    assert not (tmp_path / "r" / "index.html").exists()


def test_chains_at_once_are_capped_by_the_chains_and_the_memory(corpus, monkeypatch):
    from sklearn_clda import _memory
    from sklearn_clda.report import _parallel

    X = corpus.data
    assert _parallel.chain_jobs(8, 3, X, 3, 2) == (3, None)
    assert _parallel.chain_jobs(None, 3, X, 3, 2) == (1, None)
    phases = _memory.gibbs_phases(X.shape[0], X.shape[1], 3, 2, word_table=True,
                                  itemsize=8, n_tokens=int(X.sum()))
    peak = _memory.largest_phase(phases)[1]
    # memory for two chains at once (at half the machine), three asked for
    monkeypatch.setattr(_memory, "physical_memory", lambda: 4 * peak + 1)
    jobs, note = _parallel.chain_jobs(3, 3, X, 3, 2)
    assert jobs == 2
    assert note.startswith("3 chains at once would need about") and "running 2 at a" in note
    monkeypatch.setattr(_memory, "physical_memory", lambda: peak)
    assert _parallel.chain_jobs(3, 3, X, 3, 2)[0] == 1


def test_compare_collections_and_trend_say_where_every_chain_agrees(corpus, chains):
    from sklearn_clda.inspection import collection_trend
    from sklearn_clda.inspection._collections import chains_agree

    lined = align_chains(chains)
    a, b = chains[0].groups_
    diff = compare_collections(chains, a, b)
    expected = chains_agree(lined.draws[:, :, 0] - lined.draws[:, :, 1], 0.9, lined.unstable)
    assert diff["chains_agree"].tolist() == expected.tolist()
    assert diff["chains_agree"].any()  # the collections differ plainly here
    assert "chains_agree" not in compare_collections(chains[0], a, b)
    trend = collection_trend(chains)
    assert trend["chains_agree"].dtype == bool


def _die(model, code):
    os._exit(code)


def test_a_chain_process_that_dies_is_a_clear_error(corpus, chains):
    """A worker killed (for memory, say) ends map_chains with an error that
    says so and what to do, and leaves every fit as it was."""
    from sklearn_clda.report._parallel import ChainProcessError, map_chains

    before = [dict(vars(fit)) for fit in chains]
    with pytest.raises(ChainProcessError, match=r"a process running a chain ended abruptly "
                                                r"\(exit codes EXIT\(3\)\).*--n-jobs 1"):
        map_chains(_die, chains[:2], 2, 3)
    for fit, state in zip(chains, before):
        assert all(vars(fit)[k] is v for k, v in state.items())


def test_the_report_command_says_a_chain_process_died(tmp_path, capsys, monkeypatch):
    from sklearn_clda.report import _parallel

    def killed(*args, **kwargs):
        raise _parallel.ChainProcessError("a process running a chain ended abruptly")

    monkeypatch.setattr(_parallel, "map_chains", killed)
    source = _documents(tmp_path / "docs.csv")
    code = main(["report", "--input", str(source), "--out", str(tmp_path / "r"), "-k", "2",
                 "-n", "20", "--chains", "2", "--n-jobs", "2", "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == (
        "python -m sklearn_clda report: error: a process running a chain ended abruptly")
    assert not (tmp_path / "r").exists()


def test_chains_with_too_few_draws_are_run_further_or_reported_as_such(corpus, tmp_path,
                                                                      capsys):
    """Chains that kept fewer than 4 draws: extend_chain runs them further,
    write_report says they are too few; the command line writes its report."""
    X, groups = corpus.data, corpus.groups
    short = [CompoundLDA(n_components=3, max_iter=20, random_state=seed).fit(X, groups=groups)
             for seed in (1, 2)]
    assert short[0].collection_topic_samples_.shape[0] < 4
    summary = write_report(short[0], X, WORDS, tmp_path / "few", groups=groups,
                           chains=short[1:], figures=False)
    assert summary["diagnostics"]["n_chains"] == 2
    assert summary["comparisons"]["pairs"] == []
    info = extend_chain(short, X, groups, min_ess=20, time_budget=30)
    assert info["rounds"] >= 1 and info["ess_before"] is None
    assert short[0].n_iter_ == short[1].n_iter_ > 20
    source = _documents(tmp_path / "docs.csv")
    assert main(["report", "--input", str(source), "--out", str(tmp_path / "r"), "-k", "2",
                 "-n", "5", "--chains", "2", "--time-budget", "0", "--no-progress",
                 "--no-figures"]) == 0


def test_one_topic_chains_are_not_taken_for_the_same_chain(corpus, tmp_path):
    """With one topic every draw of pi is 1: two seeds give the same draws."""
    X, groups = corpus.data, corpus.groups
    one = [CompoundLDA(n_components=1, max_iter=20, random_state=seed).fit(X, groups=groups)
           for seed in (1, 2)]
    summary = write_report(one[0], X, WORDS, tmp_path, groups=groups, chains=one[1:],
                           figures=False)
    assert summary["diagnostics"]["n_chains"] == 2


def test_extend_chain_changes_no_chain_when_one_cannot_run(corpus):
    X, groups = corpus.data, corpus.groups
    fits = _fits(corpus, 40, seeds=(1, 2))
    before = [dict(vars(fit)) for fit in fits]
    params = [fit.get_params() for fit in fits]
    bad = X.toarray().astype(float)
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="X passed to extend_chain must hold counts"):
        extend_chain(fits, bad, groups, time_budget=5)
    with pytest.raises(ValueError, match="must hold counts, >= 0"):
        extend_chain(fits, -X.toarray(), groups, time_budget=5)
    # the second chain fails in its fit (n_jobs=0): the first is put back
    vars(fits[1])["n_jobs"] = 0
    with pytest.raises(ValueError, match="n_jobs"):
        extend_chain(fits, X, groups, min_ess=1e9, time_budget=5, n_jobs=1)
    vars(fits[1])["n_jobs"] = None
    for fit, state, old in zip(fits, before, params):
        assert all(vars(fit)[k] is v for k, v in state.items() if k != "n_jobs")
        assert fit.get_params() == old


def test_chains_must_be_of_one_model(corpus, chains, tmp_path):
    X, groups = corpus.data, corpus.groups
    other = CompoundLDA(n_components=3, max_iter=200, thin=2, alpha=0.9,
                        random_state=7).fit(X, groups=groups)
    with pytest.raises(ValueError, match="their settings differ in alpha"):
        write_report(chains[0], X, WORDS, tmp_path / "r", groups=groups, chains=[other])
    with pytest.raises(ValueError, match="^extend_chain got the same chain twice"):
        extend_chain([chains[0], _fits(corpus, 200, seeds=(0,))[0]], X, groups,
                     time_budget=0)
    from sklearn.pipeline import make_pipeline

    with pytest.raises(ValueError, match=r"pass the pipeline's last step \(pipeline\[-1\]\)"):
        extend_chain(make_pipeline(chains[0]), X, groups)


def test_write_report_refuses_a_vem_fit_before_writing(corpus, tmp_path):
    import warnings

    vem = CompoundLDA(n_components=3, algorithm="vem", max_iter=5, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vem.fit(corpus.data, groups=corpus.groups)
    with pytest.raises(ValueError, match="write_report needs a Gibbs fit"):
        write_report(vem, corpus.data, WORDS, tmp_path / "r", groups=corpus.groups)
    assert not (tmp_path / "r").exists()


def test_groups_the_model_does_not_know_are_refused(corpus, chains, tmp_path):
    from sklearn_clda.inspection import topic_correlation

    unknown = ["q"] * corpus.data.shape[0]
    with pytest.raises(ValueError, match=r"hold labels the model was not fitted with: "
                                         r"\['q'\]"):
        write_report(chains[0], corpus.data, WORDS, tmp_path / "r", groups=unknown)
    assert not (tmp_path / "r").exists()
    with pytest.raises(ValueError, match="without X label the fitted documents"):
        topic_correlation(chains[0], groups=unknown, within_collections=True)


def test_groups_as_text_name_collections_fitted_as_numbers(corpus, tmp_path):
    # Fitted with int labels, reported with their text (as read from a
    # file): the same collections, and the same documents.
    model = CompoundLDA(n_components=3, max_iter=20, random_state=0).fit(
        corpus.data, groups=corpus.groups)
    text = [str(g) for g in corpus.groups]
    summary = write_report(model, corpus.data, WORDS, tmp_path / "t", groups=text,
                           figures=False)
    same = write_report(model, corpus.data, WORDS, tmp_path / "i", groups=corpus.groups,
                        figures=False)
    assert summary["collections"] == same["collections"]
    assert "document_topics.csv" in summary["files"]


def test_pi_traces_draw_every_chain_lined_up(chains):
    import matplotlib.pyplot as plt

    from sklearn_clda.plotting import PiTraceDisplay
    from sklearn_clda.report._figures import _pi_display

    lined = align_chains(chains).draws
    disp = PiTraceDisplay.from_estimator(chains, topics=[0, 2])
    assert disp.lines_.shape == (3, 2, 2)  # chains x collections x topics
    for c in range(3):
        for j in range(2):
            np.testing.assert_array_equal(disp.lines_[c, j, 1].get_ydata(), lined[c, :, j, 2])
    styles = {disp.lines_[c, 0, 0].get_linestyle() for c in range(3)}
    assert len(styles) == 3
    texts = [t.get_text() for t in disp.legend_.get_texts()]
    assert texts == ["Topic 0", "Topic 2", "chain 1", "chain 2", "chain 3"]
    acf = PiTraceDisplay.from_estimator(chains, topics=[1], kind="acf", max_lag=5)
    assert acf.acf_.shape == (3, 6, 2, 1)
    report = _pi_display(chains, None, "trace", lined.shape[1])
    assert report.lines_.shape[0] == 3
    plt.close("all")
