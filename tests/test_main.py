"""The command line demo, ``python -m sklearn_clda``."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sklearn_clda.__main__ import main

REPO_ROOT = Path(__file__).resolve().parents[1]
COLLECTIONS = ["comp", "politics", "rec", "sci"]
# "CompoundLDA(K=5, ...): 20 sweeps in 0.9 s (17.4M tokens/s)"
TIMING = re.compile(r"sweeps in [\d.]+ s \([\d.]+M tokens/s\)")
# "    0      32.7%      9.9%     14.6%     21.8%  use key know ..."
TOPIC_LINE = re.compile(r"^\s*(\d+)((?:\s+\d+\.\d%){4})\s{2}(\S.*)$")


def _topic_lines(out):
    return [m for m in map(TOPIC_LINE.match, out.splitlines()) if m]


DEMO_ARGS = ["-k", "5", "-n", "20", "--no-progress", "--seed"]


def _run_demo(capsys, seed):
    code = main(DEMO_ARGS + [str(seed)])
    return code, capsys.readouterr().out


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
        (["-k", "0"], "--n-components must be at least 1"),
        (["-n", "1"], "--max-iter must be at least 2"),
        (["--gamma", "-1"], "--gamma must be positive"),
        (["--gamma", "0"], "--gamma must be positive"),
        (["--top-words", "0"], "--top-words must be at least 1"),
        (["-k", "three"], "invalid int value"),
        (["--unknown"], "unrecognized arguments"),
    ],
)
def test_invalid_arguments_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


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


def test_closed_stdout_pipe_gives_no_traceback():
    # `python -m sklearn_clda | head -1` must not print a BrokenPipeError.
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "sklearn_clda", "-k", "3", "-n", "10", "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=root, env=env,
    )
    proc.stdout.readline()
    proc.stdout.close()
    _, err = proc.communicate(timeout=300)
    assert b"Traceback" not in err
