"""The HTML report of a fitted CompoundLDA, and loaders for raw document files.

- :func:`load_documents` reads texts and their collection labels from a CSV
  (or TSV) file, a JSON-lines file, or a folder holding one sub-folder of
  ``.txt`` files per collection; problems with the input raise
  :class:`InputError` with a one-line message.
- :func:`extend_chain` continues a fitted model's chain until the
  effective sample size of every collection's topic proportion reaches a
  target or a time budget ends.
- :func:`write_report` writes a report folder for a fitted
  :class:`~sklearn_clda.CompoundLDA`: ``index.html`` with its style sheet
  and script (offline: nothing is fetched from the network), the figures
  as PNG files, every table as CSV (a text that a spreadsheet would run
  as a formula, such as ``=HYPERLINK(...)``, gets a leading apostrophe),
  ``report.json`` (the summary the page is rendered from), the model as
  ``model.npz`` (read safely with :func:`sklearn_clda.load_model`) with
  ``vocabulary.txt``, and as ``model.joblib`` (pickle: load only if
  trusted). Every file is written to a temporary file in the folder and
  then moved into place; report files that are symbolic links are refused.

They back the ``python -m sklearn_clda report`` command line. The page is
rendered with Jinja2 (``pip install "sklearn-clda[plot]"``).
"""

from ._extend import extend_chain
from ._files import output_problem
from ._load import InputError, load_documents
from ._write import write_report

__all__ = ["InputError", "extend_chain", "load_documents", "output_problem", "write_report"]
