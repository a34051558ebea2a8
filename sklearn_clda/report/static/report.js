// The report's only script: sortable tables, the collection-pair picker, the
// topic finder and the map of the topics.
// It loads nothing: the page works offline, from its folder alone.
"use strict";

// The page shows user text as bidirectional isolates (U+2066-U+2069, with
// any embeddings U+202A-U+202E of the text itself): invisible, and no part
// of what a text column sorts by.
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/g;

function cellValue(row, column, numeric) {
  const cell = row.cells[column];
  const raw = cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent.trim();
  if (!numeric) return raw.replace(BIDI_CONTROLS, "");
  const value = parseFloat(raw);
  return Number.isNaN(value) ? -Infinity : value;
}

function compareValues(x, y, numeric) {
  if (numeric) return x < y ? -1 : x > y ? 1 : 0;
  return x.localeCompare(y, undefined, { sensitivity: "base", numeric: true });
}

function sortTable(table, header) {
  const column = Array.prototype.indexOf.call(header.parentNode.cells, header);
  const numeric = header.dataset.type === "num";
  const ascending = header.getAttribute("aria-sort") !== "ascending";
  const body = table.tBodies[0];
  const rows = Array.from(body.rows).map((row, index) => ({ row, index }));
  rows.sort((a, b) => {
    const x = cellValue(a.row, column, numeric);
    const y = cellValue(b.row, column, numeric);
    const order = compareValues(x, y, numeric) || a.index - b.index;
    return ascending ? order : -order;
  });
  for (const th of header.parentNode.cells) th.removeAttribute("aria-sort");
  header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  for (const { row } of rows) body.appendChild(row);
}

function makeSortable(table) {
  for (const header of table.tHead.rows[0].cells) {
    header.tabIndex = 0;
    header.title = "Sort by this column";
    header.addEventListener("click", () => sortTable(table, header));
    header.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        sortTable(table, header);
      }
    });
  }
}

function setUpPairPicker() {
  const picker = document.getElementById("pair-picker");
  if (!picker) return;
  const select = picker.querySelector("select");
  const pairs = document.querySelectorAll(".pair");
  const show = () => {
    for (const pair of pairs) pair.hidden = pair.id !== select.value;
  };
  select.addEventListener("change", show);
  picker.hidden = false;
  show();
}

// Shows the topics whose words (data-words: label and most probable words)
// hold every word typed, each as a word or the start of one, ignoring case.
function setUpTopicFinder() {
  const finder = document.getElementById("topic-finder");
  const table = document.getElementById("topics-table");
  if (!finder || !table) return;
  const input = document.getElementById("topic-search");
  const count = document.getElementById("topic-search-count");
  const rows = Array.from(table.tBodies[0].rows, (row) => ({
    row,
    words: (row.dataset.words || "").replace(BIDI_CONTROLS, "").toLowerCase().split(/\s+/),
  }));
  const filter = () => {
    const terms = input.value.toLowerCase().split(/\s+/).filter((term) => term);
    let shown = 0;
    for (const { row, words } of rows) {
      row.hidden = !terms.every((term) => words.some((word) => word.startsWith(term)));
      shown += row.hidden ? 0 : 1;
    }
    count.textContent = terms.length ? `${shown} of ${rows.length} topics` : "";
  };
  input.addEventListener("input", filter);
  finder.hidden = false;
  filter();
}

// The map's colour of a collection's share over the corpus's: blue below 1,
// white at 1, red above, the ends at 1/4 and 4 (as TopicMapDisplay's).
const RATIO_COLOURS = { low: [33, 102, 172], one: [247, 247, 247], high: [178, 24, 43] };

function ratioColour(share, corpus) {
  const ratio = corpus > 0 ? share / corpus : share > 0 ? Infinity : 1;
  const t = Math.max(-1, Math.min(1, Math.log2(ratio) / 2));
  const end = t < 0 ? RATIO_COLOURS.low : RATIO_COLOURS.high;
  const rgb = RATIO_COLOURS.one.map((c, i) => Math.round(c + (end[i] - c) * Math.abs(t)));
  return `rgb(${rgb.join(",")})`;
}

// A topic's n most relevant words at lambda: lambda log phi + (1 - lambda)
// log lift, evaluated as sklearn_clda.inspection.topic_labels evaluates it
// (the same double operations in the same order), ties to the word of the
// lower vocabulary index.
function relevantWords(words, lambda, n) {
  return words
    .map((w) => ({ w, score: lambda * w.log_phi + (1.0 - lambda) * w.log_lift }))
    .sort((a, b) => b.score - a.score || a.w.index - b.w.index)
    .slice(0, n)
    .map(({ w }) => w.word);
}

function setUpTopicMap() {
  const data = document.getElementById("topic-map-data");
  const svg = document.getElementById("map-svg");
  if (!data || !svg) return;
  const map = JSON.parse(data.textContent);
  const circles = Array.from(svg.querySelectorAll(".map-topic"));
  const outlines = Array.from(svg.querySelectorAll(".map-ref"));
  const select = document.getElementById("map-collection");
  const slider = document.getElementById("map-lambda");
  const list = document.getElementById("map-word-list");
  let chosen = null;
  const drawShares = () => {
    const collection = !select || select.value === "" ? null
      : map.collections[Number(select.value)];
    circles.forEach((circle, i) => {
      const share = collection ? collection.shares[i] : map.corpus[i];
      circle.setAttribute("r", (map.max_radius * Math.sqrt(share / map.peak)).toFixed(3));
      circle.style.fill = collection ? ratioColour(share, map.corpus[i]) : "";
      outlines[i].setAttribute("visibility", collection ? "visible" : "hidden");
    });
  };
  const drawWords = () => {
    const lambda = parseFloat(slider.value);
    document.getElementById("map-lambda-value").textContent = lambda.toFixed(1);
    if (chosen === null) return;
    list.replaceChildren(...relevantWords(map.words[chosen], lambda, map.n_words).map((word) => {
      const item = document.createElement("li");
      item.appendChild(document.createElement("bdi")).textContent = word;
      return item;
    }));
  };
  const choose = (i) => {
    chosen = i;
    circles.forEach((circle, j) => circle.classList.toggle("selected", j === i));
    document.getElementById("map-topic").textContent = circles[i].textContent;
    document.getElementById("map-words").hidden = false;
    drawWords();
  };
  circles.forEach((circle, i) => {
    circle.setAttribute("tabindex", "0");
    circle.setAttribute("role", "button");
    circle.addEventListener("click", () => choose(i));
    circle.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        choose(i);
      }
    });
  });
  if (select) select.addEventListener("change", drawShares);
  slider.addEventListener("input", drawWords);
  for (const hidden of document.querySelectorAll(".map-controls, .map-help")) hidden.hidden = false;
  drawShares();
  drawWords();
}

document.addEventListener("DOMContentLoaded", () => {
  for (const table of document.querySelectorAll("table.sortable")) makeSortable(table);
  setUpPairPicker();
  setUpTopicFinder();
  setUpTopicMap();
});
