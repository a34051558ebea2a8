"""The command line demo, ``python -m sklearn_clda``."""

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from sklearn_clda.__main__ import format_topic_table, main

from _signals import interruptible_child

REPO_ROOT = Path(__file__).resolve().parents[1]
COLLECTIONS = ["comp", "politics", "rec", "sci"]
# "CompoundLDA(K=5, ...): 20 sweeps in 0.9 s (17.4M tokens/s)"
TIMING = re.compile(r"sweeps in [\d.]+ s \([\d.]+M tokens/s\)")
# "    0      32.7%      9.9%     14.6%     21.8%  use key know ..."
TOPIC_LINE = re.compile(r"^\s*(\d+)((?:\s+\d+\.\d%){4})\s{2}(\S.*)$")


def _topic_lines(out):
    return [m for m in map(TOPIC_LINE.match, out.splitlines()) if m]


DEMO_ARGS = ["-k", "5", "-n", "40", "--no-progress", "--seed"]


def _run_demo(capsys, seed):
    code = main(DEMO_ARGS + [str(seed)])
    return code, capsys.readouterr().out


def test_demo_themes(capsys):
    """--themes N prints the topics grouped by their words (none unasked
    below 10 topics), each collection's share of a theme the sum of its
    topics' printed in the topic table."""
    assert main(DEMO_ARGS + ["0", "--themes", "2"]) == 0
    out = capsys.readouterr().out
    topics = {int(m.group(1)): [float(p) for p in re.findall(r"(\d+\.\d)%", m.group(2))]
              for m in _topic_lines(out)}
    lines = out.split("themes by their words")[1].splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("theme"))
    assert lines[header].split()[1:5] == COLLECTIONS
    rows = [re.match(r"^(\S.*?)((?:\s+\d+\.\d%){4})\s{2}([\d ]+)$", line)
            for line in lines[header + 2:header + 4]]
    members = [list(map(int, row.group(3).split())) for row in rows]
    assert sorted(sum(members, [])) == [0, 1, 2, 3, 4]
    for row, group in zip(rows, members):
        shares = [float(p) for p in re.findall(r"(\d+\.\d)%", row.group(2))]
        summed = np.sum([topics[k] for k in group], axis=0)
        assert np.allclose(shares, summed, atol=0.05 * len(group) + 0.051)
    main(DEMO_ARGS + ["0"])
    assert "themes by their words" not in capsys.readouterr().out


def test_demo_output(capsys):
    code, out = _run_demo(capsys, 0)
    assert code == 0
    assert "10,764 documents" in out
    assert "collections: comp, politics, rec, sci" in out
    header = next(line for line in out.splitlines() if line.startswith("topic"))
    assert header.split()[1:5] == COLLECTIONS
    assert "CompoundLDA(K=5, gamma=0.5, eta=0.01)" in out
    assert TIMING.search(out)

    topics = _topic_lines(out)
    assert [int(m.group(1)) for m in topics] == [0, 1, 2, 3, 4]
    shares = [[float(p) for p in re.findall(r"(\d+\.\d)%", m.group(2))] for m in topics]
    for column in zip(*shares):
        # Each collection's pi_j sums to 1 over the 5 topics; each printed
        # share is rounded to 0.1%, so the column sum is 100 +- 0.25.
        assert sum(column) == pytest.approx(100.0, abs=0.26)
    for m in topics:
        assert len(m.group(3).split()) == 8  # --top-words default
    # The content: with seed 0 the topics and the collections they peak in are
    # those of 16-newsgroups (a word-share pairing mixed up would fail here).
    # The words are FREX words: frequent in the topic and exclusive to it.
    words = {int(m.group(1)): m.group(3).split() for m in topics}
    # a sci topic (sci.crypt or sci.space; five topics merge the others)
    assert {"encryption", "shuttle"} & set(sum(words.values(), []))
    for word, collection in [("dos", "comp"), ("israeli", "politics"),
                             ("hockey", "rec")]:
        k = next(k for k, w in words.items() if word in w)
        peak = COLLECTIONS[int(np.argmax(shares[k]))]
        assert peak == collection, (word, words[k], shares[k])


def test_demo_same_seed_same_output(capsys):
    code_a, out_a = _run_demo(capsys, 0)
    code_b, out_b = _run_demo(capsys, 0)
    assert code_a == code_b == 0
    assert TIMING.search(out_a) and TIMING.search(out_b)
    assert TIMING.sub("", out_a) == TIMING.sub("", out_b)
    # ... and the comparison is not vacuous: another seed changes the table.
    _, out_c = _run_demo(capsys, 1)
    assert TIMING.sub("", out_c) != TIMING.sub("", out_a)


def test_help_exits_zero(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for option in ["--n-components", "--max-iter", "--seed", "--top-words",
                   "--gamma", "--no-progress"]:
        assert option in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["-k", "0"], "--n-components must be in [1, 10,000]; this command writes out every topic "
         "(fit more topics with sklearn_clda.CompoundLDA in Python), got 0"),
        (["-k", "99999999999"], "--n-components must be in [1, 10,000]; this command writes out every topic "
         "(fit more topics with sklearn_clda.CompoundLDA in Python), got 99999999999"),
        (["-n", "1"], "--max-iter must be at least 2"),
        (["--gamma", "-1"], "--gamma must be positive"),
        (["--gamma", "0"], "--gamma must be positive"),
        (["--gamma", "inf"], "--gamma must be positive and finite"),
        (["--gamma", "nan"], "--gamma must be positive and finite"),
        (["--seed", "-1"], "--seed must be an integer in [0, 4294967295], got -1"),
        (["--seed", "1099511627776"], "--seed must be an integer in [0, 4294967295]"),
        (["--seed", str(2**32)], "--seed must be an integer in [0, 4294967295]"),
        (["--report", ""], "--report: the folder name is empty"),
        (["--report", "/proc/sklearn-clda-report"],
         "--report: cannot create the output folder /proc/sklearn-clda-report"),
        (["--top-words", "0"], "--top-words must be at least 1"),
        (["--themes", "1"], "--themes must be 0 (none), auto or from 2"),
        (["-k", "4", "--themes", "4"], "minus one (3), got 4"),
        (["--themes", "-1"], "--themes must be 0 (none), auto"),
        (["-k", "three"], "invalid int value"),
        (["--unknown"], "unrecognized arguments"),
    ],
)
def test_invalid_arguments_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1 and message in errors[0], err


def test_largest_seed_is_accepted(capsys):
    assert main(["-k", "2", "-n", "2", "--no-progress", "--top-words", "3",
                 "--seed", str(2**32 - 1)]) == 0
    assert len(_topic_lines(capsys.readouterr().out)) == 2


def test_topic_table_uses_the_top_words_in_order():
    components = np.array([[1.0, 5.0, 3.0, 5.0], [4.0, 1.0, 2.0, 3.0]])
    model = SimpleNamespace(
        components_=components, n_components=2, groups_=np.array(["a", "b"]),
        collection_topic_=np.array([[0.25, 0.75], [0.6, 0.4]]),
    )
    table = format_topic_table(model, ["w0", "w1", "w2", "w3"], top_words=3)
    lines = table.splitlines()
    assert lines[0].split() == ["topic", "a", "b", "top", "words"]
    # Ties keep the lower feature index first; the shares are pi[:, k].
    assert lines[2].split() == ["0", "25.0%", "60.0%", "w1", "w3", "w2"]
    assert lines[3].split() == ["1", "75.0%", "40.0%", "w0", "w3", "w2"]
    # More words than the vocabulary holds: all of them.
    table = format_topic_table(model, ["w0", "w1", "w2", "w3"], top_words=10)
    assert table.splitlines()[3].split()[3:] == ["w0", "w3", "w2", "w1"]
    # Many ties in a long row (where an unstable sort reorders them).
    weights = np.random.default_rng(0).integers(0, 3, size=(2, 200)).astype(float)
    model.components_ = weights
    names = [f"w{i}" for i in range(200)]
    line = format_topic_table(model, names, top_words=8).splitlines()[2]
    expected = [f"w{i}" for i in np.flatnonzero(weights[0] == 2)[:8]]
    assert line.split()[3:] == expected


def test_module_runs_as_subprocess():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    proc = subprocess.run(
        [sys.executable, "-m", "sklearn_clda", "-k", "3", "-n", "10", "--no-progress",
         "--top-words", "4"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    topics = _topic_lines(proc.stdout)
    assert len(topics) == 3
    assert all(len(m.group(3).split()) == 4 for m in topics)


def _env(unbuffered=True):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env.pop("PYTHONUNBUFFERED", None)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
def test_closed_stdout_pipe_gives_no_traceback(unbuffered):
    # `python -m sklearn_clda | head -1` must not print a BrokenPipeError. The
    # reader is gone before the first line: with block-buffered stdout (the
    # default for a pipe) the write fails only at the final flush.
    proc = subprocess.Popen(
        [sys.executable, "-m", "sklearn_clda", "-k", "2", "-n", "4", "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO_ROOT,
        env=_env(unbuffered),
    )
    proc.stdout.close()
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, err
    assert err == b"", err  # neither a traceback nor "Exception ignored"


def _interrupt(argv, ready, cwd):
    """Start ``python -m sklearn_clda argv``, send SIGINT once stdout shows
    ``ready``; return the exit code, stdout and stderr."""
    with interruptible_child(
        [sys.executable, "-m", "sklearn_clda", *argv], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, cwd=cwd, env=_env(), text=True,
    ) as proc:
        out = []
        for line in proc.stdout:
            out.append(line)
            if ready in line:
                break
        time.sleep(0.5)  # into the fit
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=60)
    return proc.returncode, "".join(out) + rest, err


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child needs POSIX")
def test_ctrl_c_in_the_demo_exits_130_without_traceback():
    code, out, err = _interrupt(["-k", "10", "-n", "100000", "--no-progress"],
                                "16-newsgroups:", REPO_ROOT)
    assert code == 130, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == "python -m sklearn_clda: interrupted"
    assert "sweeps in" not in out  # stopped in the fit


# ------------------------------------------------- names and extras
def test_console_script_help_shows_its_own_name():
    script = shutil.which("sklearn-clda") or os.path.join(
        os.path.dirname(sys.executable), "sklearn-clda"
    )
    if not os.path.exists(script):
        pytest.skip("the sklearn-clda console script is not installed (pip install -e .)")
    proc = subprocess.run([script, "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: sklearn-clda ")
    assert "python -m sklearn_clda" not in proc.stdout
    report = subprocess.run([script, "report", "--help"], capture_output=True, text=True,
                            timeout=60)
    assert report.stdout.startswith("usage: sklearn-clda report ")
    module = subprocess.run([sys.executable, "-m", "sklearn_clda", "--help"],
                            capture_output=True, text=True, timeout=60)
    assert module.stdout.startswith("usage: python -m sklearn_clda ")


def test_help_does_not_wait_for_scikit_learn():
    # Importing scikit-learn takes seconds; the help of every command is
    # printed without it (the estimators are imported on first use).
    code = ("import runpy, sys\n"
            "for argv in (['--help'], ['report', '--help'], ['select', '--help']):\n"
            "    sys.argv = ['sklearn-clda', *argv]\n"
            "    try:\n"
            "        runpy.run_module('sklearn_clda', run_name='__main__')\n"
            "    except SystemExit as exc:\n"
            "        assert exc.code == 0, exc.code\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('sklearn', 'scipy'))\n"
            "assert not heavy, heavy[:5]\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("usage: sklearn-clda") == 3


def test_demo_runs_on_the_core_dependencies():
    # README's first command installs no extra: the demo must not need pandas
    # (nor matplotlib) for its FREX table.
    # Hidden as they are when not installed: their import raises. (Not with
    # sys.modules[name] = None: scikit-learn 1.6 then reads pandas.DataFrame
    # of None.)
    code = ("import sys\n"
            "class Hide:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.partition('.')[0] in ('pandas', 'matplotlib'):\n"
            "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
            "sys.meta_path.insert(0, Hide())\n"
            "from sklearn_clda.__main__ import main\n"
            "assert 'pandas' not in sys.modules and 'matplotlib' not in sys.modules\n"
            "sys.exit(main(['-k', '3', '-n', '4', '--no-progress']))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "FREX words" in proc.stdout


def _one_memory_error(capsys, prog):
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert len(errors) == 1 and "Traceback" not in err, err
    assert errors[0].startswith(f"{prog}: error: CompoundLDA(n_components=")
    assert "keep fewer draws" in errors[0]


# 10^20 sweeps keep more draws than any memory: the fit's own check refuses
# it, and each command says so in one line (no traceback).
HUGE = str(10**20)


def test_a_demo_fit_this_machine_cannot_hold_is_one_line(capsys):
    assert main(["-n", HUGE, "--no-progress"]) == 2
    _one_memory_error(capsys, "python -m sklearn_clda")


@pytest.mark.parametrize("command", ["report", "select"])
def test_a_command_fit_this_machine_cannot_hold_is_one_line(command, tmp_path, capsys):
    for module in ("matplotlib", "jinja2", "pandas"):  # the commands' extras
        pytest.importorskip(module)
    docs = tmp_path / "docs.csv"
    docs.write_text("text,group\n" + "".join(
        f"apple banana cherry {i % 5} {'dog cat' if i % 2 else 'fig kiwi'},"
        f"{'ab'[i % 2]}\n" for i in range(20)), encoding="utf-8")
    extra = ["--no-progress"] if command == "report" else ["--n-jobs", "1"]
    assert main([command, "--input", str(docs), "--out", str(tmp_path / "out"), "-k", "2",
                 "-n", HUGE, "--min-df", "1", *extra]) == 2
    _one_memory_error(capsys, f"python -m sklearn_clda {command}")


def test_messages_print_control_characters_escaped(capsys):
    # A file name such as "\x1b]0;title\x07\x1b[2J.txt" must not retitle or
    # clear the terminal when a note names it.
    from sklearn_clda._cli_common import _fail, _note

    _note("skipped a/\x1b]0;pwned\x07\x1b[2J.txt\tand\nmore\x9b", prog="p")
    assert _fail("bad \x00 name", prog="p") == 2
    err = capsys.readouterr().err
    assert err == ("p: note: skipped a/\\x1b]0;pwned\\x07\\x1b[2J.txt\tand\nmore\\x9b\n"
                   "p: error: bad \\x00 name\n")
