// The report's only script: sortable tables, the collection-pair picker and
// the topic finder.
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

document.addEventListener("DOMContentLoaded", () => {
  for (const table of document.querySelectorAll("table.sortable")) makeSortable(table);
  setUpPairPicker();
  setUpTopicFinder();
});
