"""Rendering the report's page from its summary with Jinja2 templates.

Autoescaping is on for every template: user text (titles, collection
labels, words, document snippets) is escaped wherever it is shown, and
shown as a bidirectional isolate of its own (:func:`isolate_bidi`). An
undefined field is an error rather than an empty string.
"""

import functools
import math


def render_page(summary):
    """``index.html`` for the summary dict built by :func:`build_summary`."""
    return _environment().get_template("index.html.j2").render(r=summary)


@functools.cache
def _environment():
    """The one Jinja2 environment, kept for the process: it caches the
    compiled templates (compiling them took 0.6 s of each report)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader(__package__, "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=isolate_bidi,
    )
    env.filters.update(
        pct=pct, pp=pp, num=num, seconds=seconds, ordinal=ordinal, every=every,
        sentence=sentence, fixed=fixed, plural=plural, general=general,
    )
    return env


#: Openers of bidirectional embeddings and overrides (closed by U+202C, PDF)
#: and of isolates (closed by U+2069, PDI).
_EMBEDDING_OPENERS = frozenset("\u202a\u202b\u202d\u202e")
_ISOLATE_OPENERS = frozenset("\u2066\u2067\u2068")
_PDF, _PDI, _FSI = "\u202c", "\u2069", "\u2068"


def _balanced_bidi(text):
    """``text`` with its bidirectional controls balanced: a closing mark
    that closes nothing it opened is dropped, and each scope it leaves
    open is closed at its end (by the rules of Unicode's UAX #9: a PDI
    also closes the embeddings opened inside its isolate)."""
    out, open_embeddings = [], [0]  # per isolate level
    for ch in text:
        if ch in _EMBEDDING_OPENERS:
            open_embeddings[-1] += 1
        elif ch in _ISOLATE_OPENERS:
            open_embeddings.append(0)
        elif ch == _PDF:
            if not open_embeddings[-1]:
                continue
            open_embeddings[-1] -= 1
        elif ch == _PDI:
            if len(open_embeddings) == 1:
                continue
            open_embeddings.pop()
        out.append(ch)
    closing = _PDI * (len(open_embeddings) - 1) + _PDF * open_embeddings[0]
    return "".join(out) + closing


def isolate_bidi(value):
    """``value`` (user text: a collection label, a word, a snippet) as a
    bidirectional isolate of its own, like HTML's ``<bdi>``: the numbers and
    text around a right-to-left label keep their order (its share "(22.1%)"
    stays after it), and the controls it opens (an override such as
    "\u202eA") act inside it only. ASCII text, which holds no right-to-left
    letter, numbers and markup (already finished by a macro) pass
    unchanged.

    >>> isolate_bidi("\u202eabc") == "\u2068\u202eabc\u202c\u2069"
    True
    >>> isolate_bidi("x\u2069y") == "\u2068xy\u2069"  # closes nothing of its own
    True
    >>> isolate_bidi("plain"), isolate_bidi(3)
    ('plain', 3)
    """
    from markupsafe import Markup

    if not isinstance(value, str) or isinstance(value, Markup) or value.isascii():
        return value
    return _FSI + _balanced_bidi(value) + _PDI


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


def general(x, digits=6):
    """A number in as few characters as its digits need: ``2021.5`` ->
    ``"2021.5"``, ``0.000123`` -> ``"0.000123"``, ``1e-9`` -> ``"1e-09"``."""
    return "n/a" if _missing(x) else f"{x:.{digits}g}"


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
