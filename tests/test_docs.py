"""The documentation builds without a warning, example gallery included.

Runs ``sphinx-build -W --keep-going -b html`` on a copy of ``doc/`` in a
temporary folder, so that the build starts from scratch (every gallery
example runs) and writes nothing into the source tree. Needs the ``doc``
extra (``pip install -e ".[doc]"``); skipped without it. On a 2-core machine
the build takes about a minute, most of it the gallery's fits (run two at a
time).
"""

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
DOC_DIR = REPO_ROOT / "doc"

# Written by the build into the source folder; never copied.
GENERATED = ("_build", "generated", "auto_examples", "_cli", "sg_execution_times.rst")

# The whole build, gallery included, must stay well inside CI's budget.
TIMEOUT_SECONDS = 900


@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path):
    pytest.importorskip("sphinx", reason="building the docs needs the 'doc' extra")
    pytest.importorskip("numpydoc", reason="building the docs needs the 'doc' extra")
    pytest.importorskip("sphinx_gallery", reason="building the docs needs the 'doc' extra")
    pytest.importorskip(
        "pydata_sphinx_theme", reason="building the docs needs the 'doc' extra"
    )
    pytest.importorskip("matplotlib", reason="the example gallery needs matplotlib")
    pytest.importorskip(
        "pyLDAvis", reason="the gallery's pyLDAvis example needs pyLDAvis, which needs "
        "gensim: neither installs on Python 3.14"
    )
    pytest.importorskip(
        "sphinx-mathjax-offline", reason="building the docs needs the 'doc' extra"
    )

    source = tmp_path / "doc"
    shutil.copytree(DOC_DIR, source, ignore=shutil.ignore_patterns(*GENERATED))
    out = tmp_path / "html"
    env = dict(os.environ)
    # The package is imported from the repository (installed or not), and
    # figures are drawn off screen.
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p
    )
    env["MPLBACKEND"] = "Agg"

    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
         str(source), str(out)],
        capture_output=True, text=True, env=env, cwd=tmp_path,
        timeout=TIMEOUT_SECONDS,
    )
    seconds = time.perf_counter() - start
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, (
        f"sphinx-build failed (exit {proc.returncode}) after {seconds:.0f} s:\n"
        + log[-20000:]
    )
    print(f"documentation built in {seconds:.1f} s")

    # The main pages, every API page and every gallery example were written.
    for page in ("index", "install", "getting_started", "user_guide", "api",
                 "benchmarks", "migration", "auto_examples/index"):
        assert (out / f"{page}.html").is_file(), page
    for name in ("sklearn_clda.CompoundLDA", "sklearn_clda.LDAGibbs",
                 "sklearn_clda.exceptions.UnseenCollectionWarning",
                 "sklearn_clda.plotting.CollectionTopicDisplay",
                 "sklearn_clda.metrics.doc_completion_split",
                 "sklearn_clda.datasets.load_news16"):
        assert (out / "generated" / f"{name}.html").is_file(), name
    examples = sorted(p.stem for p in (DOC_DIR / "examples").glob("plot_*.py"))
    assert examples
    for name in examples:
        page = out / "auto_examples" / f"{name}.html"
        assert page.is_file(), name
        # Each example drew at least one figure.
        assert list((out / "_images").glob(f"sphx_glr_{name}_001.png")), name

    # The formulas render offline: MathJax is copied into the build, and no
    # page loads a script or stylesheet from another site.
    assert (out / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert 'src="_static/mathjax/tex-chtml.js"' in (out / "user_guide.html").read_text()
    for page in out.rglob("*.html"):
        assert not re.search(
            r'<(script|link)\b[^>]*\b(src|href)="https?://', page.read_text()
        ), page
