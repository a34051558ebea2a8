"""The report's page in a real browser: headless Chromium driven by Selenium.

Loads ``index.html`` from a file:// URL and checks that the page logs no
console error, that every image loads, that sorting a table by a click on
its header works, that the collection-pair picker shows one pair at a time,
that the map of topics sizes them by the chosen collection and lists a
clicked topic's words by relevance as Python ranks them,
that every CSV link resolves to a CSV file with the expected header, and
that nothing is fetched from outside the report's folder.

Skipped, with the reason, when Selenium, Chromium or its driver is missing
(``apt-get install chromium chromium-driver``; ``pip install selenium``).
"""

import csv
import json
import os
import re
import shutil
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("jinja2")
webdriver = pytest.importorskip(
    "selenium.webdriver", reason="selenium is not installed (pip install selenium)"
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_report import (  # noqa: E402
    COLLECTIONS, _make_documents, _report_on_labels, _run, _write_csv)

CHROMIUM = [os.environ.get("CHROMIUM_BINARY"), "chromium", "chromium-browser",
            "google-chrome", "google-chrome-stable"]
DRIVERS = [os.environ.get("CHROMEDRIVER"), "chromedriver", "/usr/lib/chromium/chromedriver"]

# The header row of every CSV file the page links to.
CSV_HEADERS = {
    "collections.csv": ["name", "documents", "document_share", "tokens", "ess_min",
                        "ess_median", "closest", "closest_distance"],
    "collection_distances.csv": ["a", "b", "distance", "lower", "upper", "ess", "rhat"],
    "topics.csv": ["rank", "topic", "label_words", "top_words", "share", "tokens",
                   "coherence", "exclusivity", "largest_in", "largest_share", "largest_lower",
                   "largest_upper", "chain_distance", "unstable"],
    "collection_topics.csv": ["collection", "topic", "mean", "lower", "upper", "ess",
                              "rhat", "corpus_wide"],
    "themes.csv": ["collection", "theme", "topics", "mean", "lower", "upper", "ess", "rhat",
                   "corpus_wide"],
    "distinctive_topics.csv": ["collection", "topic", "share", "lower", "upper", "ess",
                               "corpus_share", "ratio", "difference", "difference_lower",
                               "difference_upper", "difference_ess", "verdict",
                               "chains_agree"],
    "topic_correlations.csv": ["topic_a", "topic_b", "within_collections", "corpus",
                               "edge_within", "edge_corpus", "lower", "upper"],
    "representative_documents.csv": ["topic", "within_collection", "row", "collection",
                                     "weight", "snippet"],
    "collection_words.csv": ["topic", "collection", "collection_tokens", "rank", "word", "z",
                             "rate", "rest_rate"],
}
N_TOPICS = 12  # topic numbers 10 and 11 sort after 9 as numbers, before 2 as text
CSV_HEADERS["document_collections.csv"] = (
    ["document", "collection", "most_likely", "probability", "own"]
    + [f"p_{label}" for label in sorted(COLLECTIONS)])
CSV_HEADERS["document_topics.csv"] = (
    ["document", "collection"] + [f"topic_{k}" for k in range(N_TOPICS)])


def _find(candidates):
    for name in candidates:
        if name and (shutil.which(name) or (os.path.isabs(name) and os.access(name, os.X_OK))):
            return shutil.which(name) or name
    return None


@pytest.fixture(scope="module")
def browser():
    chromium, driver = _find(CHROMIUM), _find(DRIVERS)
    if chromium is None:
        pytest.skip("no Chromium browser found (apt-get install chromium, or set "
                    "CHROMIUM_BINARY)")
    if driver is None:
        pytest.skip("no chromedriver found (apt-get install chromium-driver, or set "
                    "CHROMEDRIVER)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--window-size=1280,1000"]:
        options.add_argument(arg)
    options.binary_location = chromium
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    session = webdriver.Chrome(options=options, service=Service(driver))
    yield session
    session.quit()


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("browser_report")
    path = _write_csv(tmp / "docs.csv", _make_documents())
    out = tmp / "report"
    code, _, err = _run(["report", "--input", str(path), "--text-column", "body",
                         "--group-column", "outlet", "--out", str(out), "-k", str(N_TOPICS),
                         "-n", "30", "--time-budget", "1", "--no-progress"])
    assert code == 0, err
    return out


@pytest.fixture(scope="module")
def page(browser, report):
    browser.get((report / "index.html").as_uri())
    browser.execute_script("return document.readyState")  # waits for the load
    return browser


def _severe(browser):
    return [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]


def test_page_logs_no_console_error(page):
    assert _severe(page) == []
    # The check can fail: a script error is logged as SEVERE.
    page.execute_script("setTimeout(() => { throw new Error('planted'); }, 0)")
    page.execute_script("return 1")
    assert any("planted" in entry["message"] for entry in _severe(page))


def test_every_image_loads(page):
    # Lazy images load once wanted: ask for each and wait until it is decoded
    # (decode() fails for an image that cannot be loaded: width 0).
    page.set_script_timeout(60)
    images = page.execute_async_script("""
        const done = arguments[arguments.length - 1];
        Promise.all(Array.from(document.images, img => {
          img.loading = "eager";
          return img.decode().then(() => [img.getAttribute("src"), img.naturalWidth],
                                   () => [img.getAttribute("src"), 0]);
        })).then(done);
    """)
    assert len(images) >= 6, images
    assert all(width > 0 for _, width in images), images


def _requested_urls(browser):
    """URLs the browser requested since the last call (the DevTools network log)."""
    urls = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def test_nothing_is_fetched_from_outside_the_folder(page, report):
    urls = _requested_urls(page)
    names = {Path(unquote(urlparse(url).path)).name for url in urls}
    assert {"index.html", "report.css", "report.js", "topic_words.png"} <= names, urls
    folder = report.resolve()
    for url in urls:
        parsed = urlparse(url)
        assert parsed.scheme == "file", url
        assert Path(unquote(parsed.path)).resolve().parent == folder, url


def _column(page, table_id, index):
    return page.execute_script(
        "return Array.from(document.querySelectorAll(`#${arguments[0]} tbody tr`), "
        "row => row.cells[arguments[1]].dataset.sort ?? row.cells[arguments[1]].textContent);",
        table_id, index)


def _click_header(page, table_id, text):
    header = page.find_element(
        "xpath", f"//table[@id='{table_id}']/thead//th[normalize-space()='{text}']")
    header.click()
    return header


def test_clicking_a_header_sorts_the_table(page):
    before = _column(page, "collections-table", 0)
    header = _click_header(page, "collections-table", "Collection")
    names = _column(page, "collections-table", 0)
    assert names == sorted(COLLECTIONS, key=str.lower)
    assert header.get_attribute("aria-sort") == "ascending"
    _click_header(page, "collections-table", "Collection")
    assert _column(page, "collections-table", 0) == names[::-1]
    assert sorted(before) == sorted(names)

    # A numeric column sorts by value, not as text ("10" after "9").
    _click_header(page, "topics-table", "Topic")
    topics = [int(v) for v in _column(page, "topics-table", 0)]
    assert topics == list(range(N_TOPICS))
    header = _click_header(page, "topics-table", "Size")
    sizes = [float(v) for v in _column(page, "topics-table", 2)]
    assert sizes == sorted(sizes) and header.get_attribute("aria-sort") == "ascending"
    _click_header(page, "topics-table", "Size")
    assert [float(v) for v in _column(page, "topics-table", 2)] == sorted(sizes, reverse=True)


def test_the_topic_finder_shows_the_topics_with_every_word(page):
    from selenium.webdriver.common.keys import Keys

    finder = page.find_element("id", "topic-finder")
    assert finder.is_displayed()
    search = page.find_element("id", "topic-search")
    rows = page.find_elements("css selector", "#topics-table tbody tr")
    words = [row.get_attribute("data-words").split() for row in rows]
    first, second = words[0][0], words[0][-1]

    def shown():
        return [row.is_displayed() for row in rows]

    def count():
        return page.find_element("id", "topic-search-count").text

    # the start of a word, in other case: the topics with a word that starts so
    search.send_keys(first[:3].upper())
    expected = [any(w.startswith(first[:3]) for w in row) for row in words]
    assert shown() == expected and 1 <= sum(expected) < len(rows)
    assert count() == f"{sum(expected)} of {len(rows)} topics"
    # every word must be there
    search.send_keys(Keys.CONTROL, "a")
    search.send_keys(f"{first} {second}")
    expected = [first in row and second in row for row in words]
    assert shown() == expected and expected[0]
    search.send_keys(" zzzzqq")
    assert not any(shown()) and count() == f"0 of {len(rows)} topics"
    search.send_keys(Keys.CONTROL, "a", Keys.BACKSPACE)
    assert all(shown()) and count() == ""


def test_pair_picker_shows_one_pair_at_a_time(page):
    pairs = page.find_elements("css selector", ".pair")
    if not pairs:
        pytest.skip("this report shows no pairwise comparison")
    from selenium.webdriver.support.ui import Select

    n = len(COLLECTIONS)
    assert len(pairs) == n * (n - 1) // 2
    picker = page.find_element("id", "pair-picker")
    assert picker.is_displayed()
    select = Select(page.find_element("id", "pair-select"))
    for option in range(len(pairs)):
        select.select_by_index(option)
        shown = [pair.get_attribute("id") for pair in pairs if pair.is_displayed()]
        assert shown == [f"pair-{option}"]


def _relevant(words, lam, n):
    """The page's ranking, in Python: relevance from the two logs, ties to
    the lower vocabulary index."""
    ranked = sorted(words, key=lambda w: (-(lam * w["log_phi"] + (1.0 - lam) * w["log_lift"]),
                                          w["index"]))
    return [w["word"] for w in ranked[:n]]


def test_the_map_sizes_the_topics_by_the_chosen_collection(page, report):
    from selenium.webdriver.support.ui import Select

    data = json.loads((report / "report.json").read_text(encoding="utf-8"))["topic_map"]
    circles = page.find_elements("css selector", "#map-svg .map-topic")
    outlines = page.find_elements("css selector", "#map-svg .map-ref")
    assert len(circles) == len(data["topics"]) == N_TOPICS
    assert page.find_element("id", "map-collection").is_displayed()

    def radii():
        return [float(c.get_attribute("r")) for c in circles]

    def expected(shares):
        return [data["max_radius"] * (share / data["peak"]) ** 0.5 for share in shares]

    assert radii() == pytest.approx(expected(data["corpus"]), abs=1e-3)
    assert all(o.get_attribute("visibility") == "hidden" for o in outlines)
    select = Select(page.find_element("id", "map-collection"))
    for j, collection in enumerate(data["collections"]):
        select.select_by_index(j + 1)
        assert radii() == pytest.approx(expected(collection["shares"]), abs=1e-3)
        assert all(o.get_attribute("visibility") == "visible" for o in outlines)
        # red where the collection uses the topic more than the corpus
        for circle, share, corpus in zip(circles, collection["shares"], data["corpus"]):
            red, _, blue = map(int, re.findall(r"\d+", circle.value_of_css_property("fill")))
            if share > 1.1 * corpus:
                assert red > blue
            elif share < corpus / 1.1:
                assert blue > red
    select.select_by_index(0)
    assert radii() == pytest.approx(expected(data["corpus"]), abs=1e-3)


def test_a_topic_of_the_map_lists_its_words_by_relevance(page, report):
    data = json.loads((report / "report.json").read_text(encoding="utf-8"))["topic_map"]
    circles = page.find_elements("css selector", "#map-svg .map-topic")
    assert not page.find_element("id", "map-words").is_displayed()
    slider = page.find_element("id", "map-lambda")

    def listed():
        return [li.text for li in page.find_elements("css selector", "#map-word-list li")]

    for i in (0, N_TOPICS - 1):
        circles[i].click()
        assert "selected" in circles[i].get_attribute("class")
        assert page.find_element("id", "map-topic").text.startswith(
            f"Topic {data['topics'][i]}: ")
        for lam in (0.6, 0.0, 0.3, 1.0):
            page.execute_script("arguments[0].value = arguments[1]; arguments[0]"
                                ".dispatchEvent(new Event('input'))", slider, str(lam))
            assert listed() == _relevant(data["words"][i], lam, data["n_words"])
            assert page.find_element("id", "map-lambda-value").text == f"{lam:.1f}"


def test_csv_links_resolve_to_csv_files(page, report):
    links = page.execute_script(
        "return Array.from(document.querySelectorAll('a[href$=\".csv\"]'), a => a.href);")
    names = [Path(unquote(urlparse(link).path)).name for link in links]
    assert set(CSV_HEADERS) <= set(names), names
    for link in links:
        path = Path(unquote(urlparse(link).path))
        assert path.resolve().parent == report.resolve(), link
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        assert len(rows) > 1, path.name
        if path.name in CSV_HEADERS:
            assert rows[0] == CSV_HEADERS[path.name], path.name
        assert all(len(row) == len(rows[0]) for row in rows), path.name


def _top_level_rules(css):
    """The number of rules at the top level of a style sheet (an ``@media``
    block counts once), comments removed."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    depth, rules = 0, 0
    for ch in css:
        if ch == "{":
            rules += depth == 0
            depth += 1
        elif ch == "}":
            depth -= 1
    return rules


def test_the_browser_keeps_every_rule_of_the_style_sheet(page, report):
    # A stray token before a rule (once a leftover \"\"\" quote) makes the
    # browser drop that rule silently: the page looks right but unstyled there.
    css = (report / "report.css").read_text(encoding="utf-8")
    # (a file:// sheet's rules are closed to scripts: parse a copy in a <style>)
    kept = page.execute_script("""
        const style = document.createElement("style");
        style.textContent = arguments[0];
        document.head.appendChild(style);
        const n = style.sheet.cssRules.length;
        style.remove();
        return n;""", css)
    assert kept == _top_level_rules(css) > 20


LONG_LABEL = ("Frankfurter Allgemeine Zeitung, Wirtschaft und Finanzen, "
              "Sonntagsausgabe mit Beilagen aus den Regionen Rhein-Main und Hessen")
RTL_LABELS = ["\u05e2\u05d9\u05ea\u05d5\u05df \u05d4\u05d0\u05e8\u05e5",
              "\u0634\u0628\u0643\u0629 \u0627\u0644\u062c\u0632\u064a\u0631\u0629"]


@pytest.fixture(scope="module")
def labelled_page(browser, tmp_path_factory):
    """A report on collections labelled in Hebrew, in Arabic and with a
    label of over 120 characters."""
    tmp = tmp_path_factory.mktemp("labels")
    _report_on_labels(tmp / "r", RTL_LABELS + [LONG_LABEL])
    browser.get((tmp / "r" / "index.html").as_uri())
    return browser


def test_a_right_to_left_label_keeps_its_share_beside_it(labelled_page):
    # A Hebrew or Arabic label followed by "(22.1%)": without an isolate
    # around the label the share is drawn on its left, read as part of it.
    boxes = labelled_page.execute_script("""
        const column = Array.from(document.querySelectorAll("#topics-table thead th"))
          .findIndex(th => th.textContent.trim() === "Largest in");
        return Array.from(document.querySelectorAll("#topics-table tbody tr"), row => {
          const cell = row.cells[column];
          const range = document.createRange();
          range.selectNodeContents(cell.firstChild);
          const label = range.getBoundingClientRect();
          const share = cell.querySelector(".share").getBoundingClientRect();
          return [cell.firstChild.textContent, label.left, label.right, share.left];
        });""")
    rtl = [box for box in boxes if any(name in box[0] for name in RTL_LABELS)]
    assert rtl, boxes
    for _, label_left, label_right, share_left in rtl:
        assert label_right > label_left
        assert share_left >= label_right - 0.5, boxes


def test_long_labels_do_not_widen_the_page(labelled_page):
    # Headers wrap, the picker's select fits: no sideways scrolling of the page.
    widths = labelled_page.execute_script(
        "return [document.documentElement.scrollWidth, window.innerWidth];")
    assert widths[0] <= widths[1], widths


def test_the_map_of_a_model_of_one_collection(browser, tmp_path):
    """Fitted without groups: the map shows the corpus alone (no collection
    to choose) and lists a topic's words, with no script error."""
    import numpy as np

    from sklearn_clda import CompoundLDA
    from sklearn_clda.report import write_report

    X = np.random.default_rng(0).poisson(1.0, size=(40, 30))
    model = CompoundLDA(n_components=4, max_iter=20, thin=1, random_state=0).fit(X)
    write_report(model, X, [f"w{i}" for i in range(30)], tmp_path / "r", figures=False)
    browser.get((tmp_path / "r" / "index.html").as_uri())
    assert not browser.find_elements("id", "map-collection")
    browser.find_elements("css selector", "#map-svg .map-topic")[1].click()
    assert len(browser.find_elements("css selector", "#map-word-list li")) == 10
    assert _severe(browser) == []
