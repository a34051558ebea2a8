"""Rendering the report's page from its summary with Jinja2 templates.

Autoescaping is on for every template: user text (titles, collection
labels, words, document snippets) is escaped wherever it is shown, and the
bidirectional embeddings and isolates it opens are closed after it
(:func:`close_bidi`). An undefined field is an error rather than an empty
string.
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
        finalize=close_bidi,
    )
    env.filters.update(
        pct=pct, pp=pp, num=num, seconds=seconds, ordinal=ordinal, every=every,
        sentence=sentence, fixed=fixed, plural=plural,
    )
    return env


#: Bidirectional embeddings and overrides (closed by U+202C) and isolates
#: (closed by U+2069).
_EMBEDDINGS = str.maketrans("", "", "\u202a\u202b\u202d\u202e")
_ISOLATES = str.maketrans("", "", "\u2066\u2067\u2068")


def close_bidi(value):
    """``value`` with a closing mark for each bidirectional embedding,
    override or isolate it opens, so that a label such as "\u202eA" shows
    reversed itself but leaves the text after it ("A vs B") alone. Extra
    closing marks are ignored by browsers; other values pass unchanged.

    >>> close_bidi("\u202eabc") == "\u202eabc\u202c"
    True
    >>> close_bidi("plain"), close_bidi(3)
    ('plain', 3)
    """
    if not isinstance(value, str) or value.isascii():
        return value
    embeddings = len(value) - len(value.translate(_EMBEDDINGS))
    isolates = len(value) - len(value.translate(_ISOLATES))
    return value + "\u202c" * embeddings + "\u2069" * isolates


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
