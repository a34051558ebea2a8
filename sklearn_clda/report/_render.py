"""Rendering the report's page from its summary with Jinja2 templates.

Autoescaping is on for every template: user text (titles, collection
labels, words, document snippets) is escaped wherever it is shown. An
undefined field is an error rather than an empty string.
"""

import math

JINJA2_MISSING = (
    "the report needs Jinja2 and matplotlib, optional dependencies: "
    'pip install "sklearn-clda[plot]"'
)


def render_page(summary):
    """``index.html`` for the summary dict built by :func:`build_summary`."""
    return _environment().get_template("index.html.j2").render(r=summary)


def _environment():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader(__package__, "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        pct=pct, pp=pp, num=num, seconds=seconds, ordinal=ordinal, every=every,
        sentence=sentence, fixed=fixed, plural=plural,
    )
    return env


def _missing(x):
    return x is None or (isinstance(x, float) and not math.isfinite(x))


def pct(x, digits=1):
    """``0.123`` -> ``"12.3%"``; ``None`` -> ``"n/a"``."""
    return "n/a" if _missing(x) else f"{100 * x:.{digits}f}%"


def pp(x, sign=True):
    """A difference of proportions in percentage points: ``0.05`` -> ``"+5.0 pp"``."""
    if _missing(x):
        return "n/a"
    return f"{100 * x:+.1f} pp" if sign else f"{100 * x:.1f} pp"


def num(x, digits=0):
    """A number with thousands separators: ``12345`` -> ``"12,345"``."""
    return "n/a" if _missing(x) else f"{x:,.{digits}f}"


def fixed(x, digits=1):
    return "n/a" if _missing(x) else f"{x:.{digits}f}"


def seconds(s):
    """``12.3`` -> ``"12.3 s"``, ``300`` -> ``"5.0 min"``."""
    if _missing(s):
        return "n/a"
    return f"{s:.1f} s" if s < 120 else f"{s / 60:.1f} min"


def ordinal(n):
    """``1`` -> ``"1st"``, ``2`` -> ``"2nd"``, ``11`` -> ``"11th"``, ``23`` -> ``"23rd"``."""
    n = int(n)
    if 10 <= n % 100 <= 20:
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n:,}{suffix}"


def every(thin):
    """How often a draw is kept: ``"every sweep"``, ``"every 2nd sweep"``, ..."""
    return "every sweep" if int(thin) == 1 else f"every {ordinal(thin)} sweep"


def plural(n, word, words=None):
    """``"1 draw"``, ``"2 draws"`` (with thousands separators)."""
    return f"{n:,} {word if n == 1 else words or word + 's'}"


def sentence(text):
    """Capitalized, ending with a full stop."""
    text = str(text)
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")
