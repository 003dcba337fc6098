/* r2act report: sortable tables, filters, and the incident page (timeline + log viewer).
   Plain JavaScript, no library, no network: data files are loaded with <script> tags so
   the site works from file:// as well as over HTTP. Untrusted text only ever goes into
   textContent (never innerHTML). */
"use strict";
(function () {
  var pending = {};
  window.r2actData = function (key, payload) {
    var waiting = pending[key];
    if (waiting) { delete pending[key]; waiting(payload); }
  };
  function load(src, key) {
    return new Promise(function (resolve, reject) {
      pending[key] = resolve;
      var tag = document.createElement("script");
      tag.src = src;
      tag.onerror = function () { delete pending[key]; reject(new Error("cannot load " + src)); };
      tag.onload = function () { tag.remove(); };
      document.head.appendChild(tag);
    });
  }
  function el(name, attrs, text) {
    var node = document.createElement(name);
    if (attrs) { for (var k in attrs) { node.setAttribute(k, attrs[k]); } }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }
  var SVG = "http://www.w3.org/2000/svg";
  function svg(name, attrs, text) {
    var node = document.createElementNS(SVG, name);
    if (attrs) { for (var k in attrs) { node.setAttribute(k, attrs[k]); } }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  /* -- sortable tables ------------------------------------------------------------------ */
  function cellValue(row, index) {
    var cell = row.children[index];
    if (!cell) { return ""; }
    var v = cell.getAttribute("data-value");
    return v === null ? cell.textContent.trim() : v;
  }
  function sortBy(table, index, kind, th) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var descending = th.getAttribute("aria-sort") !== "descending";
    if (kind === "text") { descending = th.getAttribute("aria-sort") === "ascending"; }
    rows.sort(function (a, b) {
      var x = cellValue(a, index), y = cellValue(b, index);
      if (kind === "num") {
        if (x === "" && y === "") { return 0; }
        if (x === "") { return 1; }  /* missing values always last, never read as 0 */
        if (y === "") { return -1; }
        var d = parseFloat(x) - parseFloat(y);
        return descending ? -d : d;
      }
      var c = x.localeCompare(y);
      return descending ? -c : c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(th.parentNode.children, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
  }
  function sortable() {
    document.querySelectorAll("table.sortable").forEach(function (table) {
      var heads = table.tHead ? table.tHead.rows[0].children : [];
      Array.prototype.forEach.call(heads, function (th, index) {
        var kind = th.getAttribute("data-sort");
        if (!kind) { return; }
        th.tabIndex = 0;
        th.classList.add("sort");
        var go = function () { sortBy(table, index, kind, th); };
        th.addEventListener("click", go);
        th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); go(); } });
      });
    });
  }
  function filters() {
    document.querySelectorAll("input[data-filter]").forEach(function (input) {
      var table = document.getElementById(input.getAttribute("data-filter"));
      var count = document.getElementById("filter-count");
      if (!table) { return; }
      input.addEventListener("input", function () {
        var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
        var shown = 0;
        Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
          var text = row.textContent.toLowerCase();
          var ok = words.every(function (w) { return text.indexOf(w) >= 0; });
          row.hidden = !ok;
          if (ok) { shown += 1; }
        });
        if (count) { count.textContent = words.length ? shown + " shown" : ""; }
      });
    });
  }

  /* -- log chunks: base64 of one LZ4 block (see r2act.report.observations.log_chunks) --- */
  function bytes(b64) {
    var raw = atob(b64);
    var out = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i += 1) { out[i] = raw.charCodeAt(i); }
    return out;
  }
  /* The LZ4 block format: a token (literal length, match length), literals, a 2-byte
     offset back into the output, then the match; 15 in a length means more bytes follow. */
  function unlz4(src, size) {
    var dst = new Uint8Array(size), i = 0, o = 0, n = src.length;
    while (i < n) {
      var token = src[i++], literals = token >>> 4, more;
      if (literals === 15) { do { more = src[i++]; literals += more; } while (more === 255); }
      dst.set(src.subarray(i, i + literals), o);
      i += literals; o += literals;
      if (i >= n) { break; }
      var from = o - (src[i] | (src[i + 1] << 8));
      i += 2;
      var length = token & 15;
      if (length === 15) { do { more = src[i++]; length += more; } while (more === 255); }
      length += 4;
      if (from < 0 || o + length > size) { throw new Error("corrupt log chunk"); }
      for (var k = 0; k < length; k += 1) { dst[o++] = dst[from + k]; }
    }
    return dst;
  }
  var decoder = new TextDecoder("utf-8");
  function decodeChunk(payload) {
    var n = payload.n;
    var buffer = unlz4(bytes(payload.z), payload.u).buffer;
    var at = 0;
    function take(Kind, count) {
      var view = new Kind(buffer, at, count);
      at += count * Kind.BYTES_PER_ELEMENT;
      return view;
    }
    var t = take(Int32Array, n), o = take(Int32Array, n + 1);
    var s = take(Uint16Array, n), d = take(Uint16Array, n);
    var p = take(Uint8Array, n), e = take(Uint8Array, n);
    var x = new Uint8Array(buffer, at);
    var lines = new Array(n);
    for (var i = 0; i < n; i += 1) { lines[i] = decoder.decode(x.subarray(o[i], o[i + 1])); }
    return { n: n, t: t, p: p, s: s, d: d, e: e, lines: lines, lower: null };
  }

  /* -- incident page ---------------------------------------------------------------------- */
  var PAGE = 100;
  function incident() {
    var meta = JSON.parse(document.getElementById("incident-meta").textContent);
    var base = "../data/" + meta.slug + "/";
    var chunks = new Array(meta.logs.chunks.length);
    var starts = [];
    var acc = 0;
    meta.logs.chunks.forEach(function (n) { starts.push(acc); acc += n; });
    function chunk(k) {
      if (chunks[k]) { return Promise.resolve(chunks[k]); }
      return load(base + "logs-" + (k + 1) + ".js", "logs/" + (k + 1)).then(decodeChunk).then(function (chunk) {
        chunks[k] = chunk;
        return chunk;
      });
    }
    function all() {
      var list = [];
      for (var k = 0; k < chunks.length; k += 1) { list.push(chunk(k)); }
      return Promise.all(list);
    }
    // run/drawn: the latest filter and the latest page drawn; an older one that resolves
    // late (its chunks still loading) is dropped instead of drawing over a newer one
    var state = { page: 0, matches: null, run: 0, drawn: 0 };
    var timer = null;
    var search = document.getElementById("log-search");
    var phase = document.getElementById("log-phase");
    var service = document.getElementById("log-service");
    var errors = document.getElementById("log-errors");
    var status = document.getElementById("log-status");
    var rowsBody = document.getElementById("log-rows");
    var pageLabel = document.getElementById("log-page");
    function filtered() {
      return search.value.trim() !== "" || phase.value !== "" || service.value !== "" || errors.checked;
    }
    function row(c, i) {
      var tr = el("tr", c.e[i] ? { "class": "err" } : null);
      tr.appendChild(el("td", { "class": "t" }, (c.t[i] / 1000).toFixed(2)));
      tr.appendChild(el("td", null, meta.logs.phases[c.p[i]] || "?"));
      tr.appendChild(el("td", null, meta.logs.services[c.s[i]]));
      tr.appendChild(el("td", { "class": "pod" }, meta.logs.pods[c.d[i]]));
      tr.appendChild(el("td", { "class": "line" }, c.lines[i]));
      return tr;
    }
    function locate(index) {
      var k = 0;
      while (k + 1 < starts.length && starts[k + 1] <= index) { k += 1; }
      return [k, index - starts[k]];
    }
    function render() {
      var total = state.matches ? state.matches.length : meta.logs.lines;
      var pages = Math.max(1, Math.ceil(total / PAGE));
      state.page = Math.min(state.page, pages - 1);
      var from = state.page * PAGE, to = Math.min(total, from + PAGE);
      pageLabel.textContent = total ? "lines " + (from + 1) + "–" + to + " of " + total + " · page " + (state.page + 1) + " of " + pages : "no lines";
      var wanted = [];
      for (var g = from; g < to; g += 1) {
        wanted.push(state.matches ? state.matches[g] : locate(g));
      }
      var needed = {};
      wanted.forEach(function (w) { needed[w[0]] = true; });
      var drawing = state.drawn += 1;
      return Promise.all(Object.keys(needed).map(function (k) { return chunk(Number(k)); })).then(function () {
        if (drawing !== state.drawn) { return; }
        rowsBody.textContent = "";
        var frag = document.createDocumentFragment();
        wanted.forEach(function (w) { frag.appendChild(row(chunks[w[0]], w[1])); });
        rowsBody.appendChild(frag);
      });
    }
    function apply() {
      clearTimeout(timer);  // a search still waiting for its pause is part of this one
      var run = state.run += 1;
      state.page = 0;
      if (!filtered()) { state.matches = null; status.textContent = ""; return render(); }
      status.textContent = "searching…";
      return all().then(function () {
        if (run !== state.run) { return; }
        var needle = search.value.trim().toLowerCase();
        var ph = phase.value === "" ? -1 : Number(phase.value);
        var sv = service.value === "" ? -1 : Number(service.value);
        var matches = [];
        chunks.forEach(function (c, k) {
          if (needle && !c.lower) { c.lower = c.lines.map(function (l) { return l.toLowerCase(); }); }
          for (var i = 0; i < c.n; i += 1) {
            if (ph >= 0 && c.p[i] !== ph) { continue; }
            if (sv >= 0 && c.s[i] !== sv) { continue; }
            if (errors.checked && !c.e[i]) { continue; }
            if (needle && c.lower[i].indexOf(needle) < 0) { continue; }
            matches.push([k, i]);
          }
        });
        state.matches = matches;
        status.textContent = matches.length + " matching line" + (matches.length === 1 ? "" : "s");
        return render();
      });
    }
    search.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(apply, 200); });
    [phase, service, errors].forEach(function (c) { c.addEventListener("change", apply); });
    document.getElementById("log-prev").addEventListener("click", function () { if (state.page > 0) { state.page -= 1; render(); } });
    document.getElementById("log-next").addEventListener("click", function () { state.page += 1; render(); });
    if (meta.logs.lines) { render(); } else { pageLabel.textContent = "no log lines"; }
    load(base + "series.js", "series").then(function (series) { timeline(meta, series); }, function (err) {
      var view = document.getElementById("timeline-view");
      view.textContent = String(err.message);
    });
  }

  /* -- timeline ----------------------------------------------------------------------------- */
  function timeline(meta, series) {
    var view = document.getElementById("timeline-view");
    view.textContent = "";
    view.removeAttribute("aria-busy");
    var W = 960, LABEL = 190, PLOT = W - LABEL - 10, ROW = 18;
    var end = series.width * series.buckets;
    var x = function (t) { return LABEL + Math.max(0, Math.min(1, t / end)) * PLOT; };
    var services = Object.keys(series.volume);
    var metricRows = series.metrics.length;
    var height = 24 + services.length * ROW + 28 + metricRows * 40 + (series.spans ? 28 : 0) + 24;
    var root = svg("svg", { viewBox: "0 0 " + W + " " + height, width: W, height: height, "class": "tl", role: "img" });
    root.appendChild(svg("title", null, "Timeline of the incident"));
    var during = meta.windows.during;
    if (during) {
      root.appendChild(svg("rect", { x: x(during[0]), y: 16, width: Math.max(1, x(during[1]) - x(during[0])), height: height - 36, "class": "fault" }));
      root.appendChild(svg("text", { x: x(during[0]) + 4, y: 12, "class": "fault-label" }, "fault window (during)"));
    }
    Object.keys(meta.windows).forEach(function (p) {
      var w = meta.windows[p];
      root.appendChild(svg("line", { x1: x(w[0]), x2: x(w[0]), y1: 16, y2: height - 20, "class": "phase-edge" }));
      root.appendChild(svg("text", { x: x(w[0]) + 2, y: height - 8, "class": "tick" }, p));
    });
    var y = 24;
    var bw = PLOT / series.buckets;
    services.forEach(function (name) {
      var lines = series.volume[name][0], bad = series.volume[name][1];
      var top = Math.max.apply(null, lines.concat([1]));
      var g = svg("g", { "class": "svc" });
      g.appendChild(svg("text", { x: LABEL - 6, y: y + ROW - 5, "text-anchor": "end", "class": "name" }, name));
      var total = 0, errs = 0;
      for (var b = 0; b < lines.length; b += 1) {
        total += lines[b]; errs += bad[b];
        if (lines[b]) {
          var h = Math.max(1, (lines[b] / top) * (ROW - 3));
          g.appendChild(svg("rect", { x: LABEL + b * bw, y: y + ROW - 1 - h, width: Math.max(1, bw - 0.5), height: h, "class": "bar" }));
        }
        if (bad[b]) {
          var he = Math.max(1.5, (bad[b] / top) * (ROW - 3));
          g.appendChild(svg("rect", { x: LABEL + b * bw, y: y + ROW - 1 - he, width: Math.max(1, bw - 0.5), height: he, "class": "errbar" }));
        }
      }
      g.appendChild(svg("title", null, name + ": " + total + " lines, " + errs + " error lines"));
      root.appendChild(g);
      y += ROW;
    });
    y += 6;
    root.appendChild(svg("text", { x: LABEL - 6, y: y + 14, "text-anchor": "end", "class": "name" }, "events (" + series.events.length + ")"));
    series.events.forEach(function (ev) {
      var mark = svg("line", { x1: x(ev.t), x2: x(ev.t), y1: y + 2, y2: y + 18, "class": ev.type === "Warning" ? "ev warn" : "ev" });
      mark.appendChild(svg("title", null, ev.t.toFixed(1) + " s " + ev.type + " " + ev.reason + " " + ev.object_kind + "/" + ev.object_name + ": " + ev.message));
      root.appendChild(mark);
    });
    y += 26;
    series.metrics.forEach(function (m) {
      var lo = Math.min.apply(null, m.v), hi = Math.max.apply(null, m.v);
      var span = hi - lo || 1;
      var label = svg("text", { x: 4, y: y + 16, "class": "name" }, m.query);
      label.appendChild(svg("title", null, m.query + " {" + m.labels + "} moved " + m.score + " baseline SDs"));
      root.appendChild(label);
      var short = m.labels.length > 30 ? m.labels.slice(0, 29) + "…" : m.labels;
      root.appendChild(svg("text", { x: 4, y: y + 30, "class": "sub" }, short));
      var d = "";
      for (var i = 0; i < m.t.length; i += 1) {
        d += (i ? "L" : "M") + x(m.t[i]).toFixed(1) + " " + (y + 34 - ((m.v[i] - lo) / span) * 30).toFixed(1);
      }
      root.appendChild(svg("path", { d: d, "class": "series" }));
      root.appendChild(svg("text", { x: W - 8, y: y + 10, "text-anchor": "end", "class": "sub" }, "max " + Number(hi.toPrecision(4))));
      y += 40;
    });
    if (series.spans) {
      root.appendChild(svg("text", { x: LABEL - 6, y: y + 14, "text-anchor": "end", "class": "name" }, "spans (" + series.spans.total + ")"));
      series.spans.t.forEach(function (t) { root.appendChild(svg("line", { x1: x(t), x2: x(t), y1: y + 2, y2: y + 18, "class": "span" })); });
      y += 28;
    }
    view.appendChild(root);
    if (!series.metrics.length) { view.appendChild(el("p", { "class": "note" }, "No metric series moved by more than 3 baseline standard deviations.")); }
    if (series.events.length) {
      var details = el("details", { "class": "events" });
      details.appendChild(el("summary", null, series.events.length + " events"));
      var table = el("table", { "class": "plain" });
      var head = el("tr");
      ["t (s)", "phase", "type", "reason", "object", "message", "count"].forEach(function (h) { head.appendChild(el("th", null, h)); });
      table.appendChild(head);
      series.events.forEach(function (ev) {
        var tr = el("tr", ev.type === "Warning" ? { "class": "err" } : null);
        [ev.t.toFixed(1), ev.phase, ev.type, ev.reason, ev.object_kind + "/" + ev.object_name, ev.message, ev.count].forEach(function (v) { tr.appendChild(el("td", null, v)); });
        table.appendChild(tr);
      });
      details.appendChild(table);
      view.appendChild(details);
    }
    if (series.spans) {
      var sd = el("details", { "class": "spans" });
      sd.appendChild(el("summary", null, "Traces: " + series.spans.total + " spans" + (series.spans.rows.length < series.spans.total ? " (first " + series.spans.rows.length + " shown)" : "")));
      var st = el("table", { "class": "plain" });
      var sh = el("tr");
      series.spans.columns.forEach(function (c) { sh.appendChild(el("th", null, c)); });
      st.appendChild(sh);
      series.spans.rows.forEach(function (r) {
        var tr = el("tr");
        r.forEach(function (v) { tr.appendChild(el("td", null, v === null ? "" : v)); });
        st.appendChild(tr);
      });
      sd.appendChild(st);
      view.appendChild(sd);
    } else if (series.traces_table === false) {
      view.appendChild(el("p", { "class": "note" }, "Traces: this dataset has no traces table."));
    }
  }

  window.R2ACT = { load: load, incident: incident };
  document.addEventListener("DOMContentLoaded", function () { sortable(); filters(); });
})();
