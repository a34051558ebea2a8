"""Sphinx configuration of the sklearn-clda documentation.

Build from the repository root with::

    python -m sphinx -W --keep-going -b html doc doc/_build/html

(or ``make -C doc html``). The package must be importable (``pip install
-e ".[doc]"``, or the repository root on ``PYTHONPATH`` with the extension
built in place). No network access is needed, to build or to read the
result: intersphinx is off, references to other projects' objects are
turned into plain links by ``_external_link`` below, and MathJax is copied
into the built HTML (``_static/mathjax``, from the ``sphinx-mathjax-offline``
package of the ``doc`` extra) instead of being loaded from a CDN.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

from docutils import nodes
from sphinx.util import logging

DOC_DIR = Path(__file__).resolve().parent
REPO_ROOT = DOC_DIR.parent

try:
    import sklearn_clda
except ImportError:  # not installed: use the source tree (extension built in place)
    sys.path.insert(0, str(REPO_ROOT))
    import sklearn_clda

os.environ.setdefault("MPLBACKEND", "Agg")
_logger = logging.getLogger(__name__)

# -- Project information ------------------------------------------------------

project = "sklearn-clda"
author = "the sklearn-clda developers"
copyright = "the sklearn-clda developers"
version = release = sklearn_clda.__version__

# -- General configuration ----------------------------------------------------

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # Serves MathJax from the built docs (sets ``mathjax_path``), so that
    # the math renders offline.
    "sphinx-mathjax-offline",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "examples",  # the gallery's sources; sphinx-gallery renders them
    "**.ipynb_checkpoints",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.codeobj.json",
    "auto_examples/*.md5",
]
source_suffix = {".rst": "restructuredtext"}
root_doc = "index"
language = "en"
pygments_style = "sphinx"
default_role = "literal"  # `x` in the narrative docs renders as code

# Warn about every reference that does not resolve; the few external
# targets that cannot be linked without intersphinx are listed below.
nitpicky = True
nitpick_ignore_regex = [
    # Type words in numpydoc "Parameters" sections and return types.
    (r"py:.*", r"(array-like|sparse matrix|ndarray|optional|default.*|of shape.*)"),
    # Standard library and NumPy objects (no stable URL scheme we can build
    # offline for every one of them).
    (r"py:.*", r"(importlib|numpy)(\..*)?"),
]

# -- autodoc / autosummary / numpydoc -----------------------------------------

autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "inherited-members": True}
autodoc_typehints = "none"
autoclass_content = "class"

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_attributes_as_param_list = True
numpydoc_validation_checks = set()

# -- sphinx-gallery ---------------------------------------------------------------

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "doc_module": ("sklearn_clda",),
    "backreferences_dir": "generated",
    "remove_config_comments": True,
    "download_all_examples": False,
    "show_memory": False,
    "min_reported_time": 0,
    "matplotlib_animations": False,
    # The examples run at once, one process per core and example (with
    # joblib). Not Sphinx's -j: sphinx-mathjax-offline does not declare
    # parallel reading safe, which -W turns into an error.
    "parallel": min(os.cpu_count() or 1, len(list((DOC_DIR / "examples").glob("plot_*.py")))),
    "image_scrapers": ("matplotlib",),
    "capture_repr": ("__repr__",),
    # No execution-time pages: they load jQuery and DataTables from CDNs,
    # and the built documentation must work offline.
    "write_computation_times": False,
}

# -- HTML output --------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"sklearn-clda {release}"
html_static_path = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
# Only the API reference and the gallery have sub-pages to navigate.
html_sidebars = {
    "index": [], "install": [], "getting_started": [], "user_guide": [],
    "benchmarks": [], "migration": [],
}
html_show_sourcelink = False
html_copy_source = False

# -- Links to other projects' documentation, without intersphinx --------------

_EXTERNAL = [
    # (module prefix, URL template); {name} is the fully qualified name.
    ("sklearn.", "https://scikit-learn.org/stable/modules/generated/{name}.html"),
    ("scipy.", "https://docs.scipy.org/doc/scipy/reference/generated/{name}.html"),
    ("matplotlib.axes.Axes.", "https://matplotlib.org/stable/api/_as_gen/{name}.html"),
]


# Labels and glossary terms of scikit-learn's documentation that the
# docstrings of inherited scikit-learn methods refer to.
_SKLEARN_DOC = "https://scikit-learn.org/stable/"
_SKLEARN_LABELS = {
    "metadata_routing": "metadata_routing.html",
    "df_output_transform": "auto_examples/miscellaneous/plot_set_output.html",
    "sphx_glr_auto_examples_miscellaneous_plot_set_output.py":
        "auto_examples/miscellaneous/plot_set_output.html",
}
_SKLEARN_TERMS = {"fit", "random_state", "meta-estimator"}


def _link(uri, contnode):
    ref = nodes.reference("", "", internal=False, refuri=uri)
    ref.append(contnode)
    return ref


def _external_link(app, env, node, contnode):
    """Resolve a reference to scikit-learn, SciPy or matplotlib to its page."""
    domain, typ = node.get("refdomain"), node.get("reftype")
    target = node.get("reftarget", "")
    if domain == "std" and typ == "ref" and target in _SKLEARN_LABELS:
        return _link(_SKLEARN_DOC + _SKLEARN_LABELS[target], contnode)
    if domain == "std" and typ == "term" and target.lower() in _SKLEARN_TERMS:
        return _link(f"{_SKLEARN_DOC}glossary.html#term-{target.lower()}", contnode)
    if domain != "py":
        return None
    for prefix, template in _EXTERNAL:
        if target.startswith(prefix) and re.fullmatch(r"[\w.]+", target):
            # Methods and attributes live on their class's page.
            name = target
            parts = target.split(".")
            if prefix == "sklearn." and len(parts) > 3 and parts[-1][:1].islower():
                name = ".".join(parts[:-1])
            return _link(template.format(name=name), contnode)
    return None


# -- Command line help, generated at build time ----------------------------------


def _write_cli_help(app):
    """Write ``python -m sklearn_clda [report|select] --help`` to ``_cli/*.txt``.

    The getting-started page includes these files, so the documented options
    are always those of the code being documented. A failing command is a
    build warning (an error under ``-W``).
    """
    out_dir = DOC_DIR / "_cli"
    out_dir.mkdir(exist_ok=True)
    # Run the same package as the one imported above.
    package_root = str(Path(sklearn_clda.__file__).resolve().parents[1])
    pythonpath = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": pythonpath}
    for name, args in [("main", ["--help"]), ("report", ["report", "--help"]),
                       ("select", ["select", "--help"])]:
        command = ["python", "-m", "sklearn_clda", *args]
        proc = subprocess.run(
            [sys.executable, *command[1:]],
            capture_output=True, text=True, env=env, cwd=DOC_DIR, timeout=120,
        )
        if proc.returncode != 0:
            _logger.warning(
                "%r failed with exit code %d: %s",
                " ".join(command), proc.returncode, proc.stderr.strip()[-2000:],
            )
        text = proc.stdout
        path = out_dir / f"{name}.txt"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


def setup(app):
    app.connect("builder-inited", _write_cli_help)
    app.connect("missing-reference", _external_link)
    # Before numpydoc (priority 500) parses the sections.
