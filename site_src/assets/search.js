// qbank: the search page's Pagefind UI, loaded by qbank.js on the page that has the search root (#qb-search).
(function () {
  "use strict";
  var assets = document.currentScript.src.replace(/search\.js(\?.*)?$/, "");

  // The search page, on Pagefind's JavaScript API (pagefind.js, imported from this file because the
  // Content-Security-Policy allows no script in page content). Not Pagefind's packaged UI: at 5,000
  // questions its script, stylesheet and the filter index it loads at start were a quarter of a first
  // query's bytes (bench/search.py). Premium text is never indexed: it is not in the built pages.
  var PAGE = 5;
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text) e.textContent = text;
    return e;
  }

  function resultItem(data) {
    // every result says what it is: Question, Topic, Concept or Company (data-pagefind-meta on each page)
    var li = el("li", "pagefind-ui__result");
    var title = el("p", "pagefind-ui__result-title");
    var link = el("a", "pagefind-ui__result-link",
      (data.meta && data.meta.type ? data.meta.type + " · " : "") + ((data.meta && data.meta.title) || data.url));
    link.href = data.url;
    title.appendChild(link);
    li.appendChild(title);
    var excerpt = el("p", "pagefind-ui__result-excerpt");
    excerpt.innerHTML = data.excerpt; // Pagefind's own escaped text with <mark> around the matches
    li.appendChild(excerpt);
    var title0 = data.meta && data.meta.title;
    var subs = (data.sub_results || []).filter(function (r) { return r.url !== data.url && r.title !== title0; });
    subs = subs.slice(0, 3);
    if (subs.length) {
      var ul = el("ul", "pagefind-ui__result-nested");
      subs.forEach(function (r) {
        var sub = el("li", "pagefind-ui__result-inner");
        var a = el("a", "pagefind-ui__result-link", r.title);
        a.href = r.url;
        sub.appendChild(a);
        ul.appendChild(sub);
      });
      li.appendChild(ul);
    }
    return li;
  }

  function search() {
    var root = document.getElementById("qb-search");
    if (!root || root.dataset.qbReady) return;
    root.dataset.qbReady = "1";
    // the field, status line, list and button are in the page's HTML (site_src/search.md), so wiring them
    // moves nothing on screen: building them here shifted the text below (Lighthouse's layout shift)
    var form = root.querySelector(".pagefind-ui__form");
    var input = root.querySelector(".pagefind-ui__search-input");
    var message = root.querySelector(".pagefind-ui__message");
    var list = root.querySelector(".pagefind-ui__results");
    var more = root.querySelector(".pagefind-ui__button");
    if (!form || !input || !message || !list || !more) return;

    // Pagefind's script and WebAssembly load on first use (focus, a query, or a query in the address), not
    // with the page: a visit that searches nothing fetches none of it (bench/lighthouse.py)
    var site = new URL("..", assets);
    var api = null;
    function pagefind() {
      if (!api) {
        api = import(new URL("pagefind/pagefind.js", site).href).then(function (pf) {
          return pf.options({ baseUrl: site.pathname }).then(function () { return pf; });
        });
      }
      return api;
    }
    var shown = [], next = 0, current = "";

    function page() {
      var batch = shown.slice(next, next + PAGE);
      next += batch.length;
      more.hidden = next >= shown.length;
      return Promise.all(batch.map(function (r) { return r.data(); })).then(function (items) {
        items.forEach(function (d) { list.appendChild(resultItem(d)); });
      });
    }

    function run(q) {
      current = q;
      var url = new URL(location.href);
      if (q) url.searchParams.set("q", q); else url.searchParams.delete("q");
      history.replaceState(history.state, "", url.pathname + url.search);
      if (!q) { list.textContent = ""; message.textContent = ""; more.hidden = true; return; }
      pagefind().then(function (pf) { return pf.debouncedSearch(q, {}, 250); }).then(function (found) {
        if (!found || q !== current) return; // a later query superseded this one
        list.textContent = "";
        shown = found.results; next = 0;
        var n = shown.length;
        message.textContent = n ? n + (n === 1 ? " result" : " results") + " for " + q : "No results for " + q;
        return page();
      }).catch(function () { message.textContent = "Search could not load. Reload the page and try again."; });
    }

    input.addEventListener("focus", function () { pagefind().catch(function () { api = null; }); });
    input.addEventListener("input", function () { run(input.value.trim()); });
    form.addEventListener("submit", function (ev) { ev.preventDefault(); run(input.value.trim()); });
    more.addEventListener("click", function () { page(); });
    // the header's search box submits here as ?q=...
    var q = new URLSearchParams(location.search).get("q");
    if (q) { input.value = q; run(q.trim()); }
  }

  if (window.document$ && typeof window.document$.subscribe === "function") window.document$.subscribe(search);
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", search);
  else search();
})();
