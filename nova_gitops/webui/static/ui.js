// nova-gitops fleet view: sorting, filtering and live update. Our own static file, served from 'self' (the
// report inlines it under a hash in its Content-Security-Policy); it reads data only as text from the DOM
// and never builds HTML from strings: a live update parses the server's own escaped page and moves its
// regions in.
(function () {
  "use strict";

  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) return "";
    var key = cell.getAttribute("data-sort");
    return key !== null ? key : cell.textContent.trim().toLowerCase();
  }

  function compare(a, b) {
    var x = parseFloat(a), y = parseFloat(b);
    if (!isNaN(x) && !isNaN(y) && String(x) === a.replace(/^0+(?=\d)/, "") && String(y) === b.replace(/^0+(?=\d)/, "")) {
      return x - y;
    }
    return a < b ? -1 : a > b ? 1 : 0;
  }

  function sortTable(table, index, direction) {
    var body = table.tBodies[0];
    if (!body) return;
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (r1, r2) {
      var order = compare(cellValue(r1, index), cellValue(r2, index));
      return direction === "descending" ? -order : order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      if (i === index) th.setAttribute("aria-sort", direction);
      else th.removeAttribute("aria-sort");
    });
    table.setAttribute("data-sorted", index + ":" + direction);
  }

  function wireSorting(table) {
    if (!table.tHead || table.getAttribute("data-wired")) return;
    table.setAttribute("data-wired", "1");
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      var button = th.querySelector("button");
      if (!button) return;
      button.addEventListener("click", function () {
        var next = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
        sortTable(table, index, next);
      });
    });
  }

  function applyFilter(input) {
    var table = document.getElementById(input.getAttribute("data-filter"));
    if (!table || !table.tBodies[0]) return;
    var terms = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
      var text = row.textContent.toLowerCase();
      var match = terms.every(function (term) { return text.indexOf(term) !== -1; });
      row.hidden = !match;
      if (match) shown += 1;
    });
    var counter = document.querySelector('[data-count-for="' + table.id + '"]');
    if (counter) counter.textContent = shown + " of " + table.tBodies[0].rows.length + " shown";
  }

  function wireFilters() {
    Array.prototype.forEach.call(document.querySelectorAll("input[data-filter]"), function (input) {
      input.addEventListener("input", function () { applyFilter(input); });
      var form = input.form;
      if (form && form.hasAttribute("data-client")) {
        form.addEventListener("submit", function (event) { event.preventDefault(); applyFilter(input); });
      }
    });
  }

  function reapply() {
    Array.prototype.forEach.call(document.querySelectorAll("table[data-sortable]"), function (table) {
      wireSorting(table);
      var sorted = table.getAttribute("data-sorted");
      if (sorted) {
        var parts = sorted.split(":");
        sortTable(table, parseInt(parts[0], 10), parts[1]);
      }
    });
    Array.prototype.forEach.call(document.querySelectorAll("input[data-filter]"), applyFilter);
  }

  function refresh(version) {
    var request = new XMLHttpRequest();
    request.open("GET", window.location.href);
    request.responseType = "document";
    request.onload = function () {
      var fresh = request.response;
      if (request.status !== 200 || !fresh) return;
      var sorted = {};
      Array.prototype.forEach.call(document.querySelectorAll("table[data-sortable][id]"), function (table) {
        sorted[table.id] = table.getAttribute("data-sorted");
      });
      Array.prototype.forEach.call(document.querySelectorAll("[data-live-region]"), function (region) {
        var replacement = fresh.getElementById(region.id);
        if (replacement) region.replaceWith(document.importNode(replacement, true));
      });
      Object.keys(sorted).forEach(function (id) {
        var table = document.getElementById(id);
        if (table && sorted[id]) table.setAttribute("data-sorted", sorted[id]);
      });
      reapply();
      document.body.setAttribute("data-version", version);
    };
    request.send();
  }

  function poll(url) {
    var request = new XMLHttpRequest();
    request.open("GET", url);
    request.responseType = "json";
    request.onload = function () {
      var state = request.response;
      if (request.status === 200 && state && typeof state.version === "number") {
        var version = String(state.version);
        if (version === document.body.getAttribute("data-version")) return;
        if (document.body.hasAttribute("data-reload")) window.location.reload();
        else refresh(version);
      }
    };
    request.onloadend = function () { window.setTimeout(function () { poll(url); }, 2000); };
    request.send();
  }

  document.addEventListener("DOMContentLoaded", function () {
    wireFilters();
    reapply();
    var live = document.body.getAttribute("data-live");
    if (live && live.charAt(0) === "/") window.setTimeout(function () { poll(live); }, 1000);
  });
})();
