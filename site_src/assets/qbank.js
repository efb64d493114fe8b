// qbank: the search page's Pagefind UI, and the loader of the scripts only some pages use (the paywall,
// the practice tests and drills). Math needs no script: it is MathML, typeset at build time.
(function () {
  "use strict";
  var assets = document.currentScript.src.replace(/qbank\.js(\?.*)?$/, "");

  function add(src) {
    return new Promise(function (resolve, reject) {
      var el = document.createElement("script");
      el.async = false; // inserted scripts run in the order they were added
      el.src = src;
      el.onload = resolve;
      el.onerror = reject;
      document.head.appendChild(el);
    });
  }

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
    var form = el("form", "pagefind-ui__form");
    form.setAttribute("role", "search");
    form.setAttribute("aria-label", "Site search");
    var input = el("input", "pagefind-ui__search-input");
    input.type = "search";
    input.placeholder = "Search";
    input.autocomplete = "off";
    input.setAttribute("aria-label", "Search questions, topics, concepts and companies");
    form.appendChild(input);
    var message = el("p", "pagefind-ui__message");
    message.setAttribute("role", "status");
    var list = el("ol", "pagefind-ui__results");
    var more = el("button", "md-button pagefind-ui__button", "Load more results");
    more.type = "button";
    more.hidden = true;
    root.append(form, message, list, more);

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

  // Labels for controls that scripts add after load (axe-core: every landmark and field named): the
  // theme's code-block navs (the search field is labelled where it is made).
  function label() {
    document.querySelectorAll("nav.md-code__nav").forEach(function (nav, i) {
      nav.setAttribute("aria-label", "Code block " + (i + 1) + " actions");
    });
  }
  // one relabel per burst of DOM changes (the theme adds code navs, Pagefind its field, after load)
  var pending = false;
  new MutationObserver(function () {
    if (pending) return;
    pending = true;
    setTimeout(function () { pending = false; label(); }, 50);
  }).observe(document.body, { childList: true, subtree: true });

  // Scripts only some pages use, fetched when a page view has what they work on, each once (with instant
  // navigation they stay loaded and follow later pages through document$): the paywall where a page has a
  // sealed section, an unlock button, a count of unlocked questions or a license link; the practice scripts
  // where it has a test, a drill or the practice record. Other pages run neither (bench/lighthouse.py).
  var NEEDS = [
    [".qb-locked, .qb-premium, .qb-unlock-open, [data-qb-unlock-count]", ["paywall.js"]],
    [".qbp-test, .qbp-drill, .qbp-progress", ["practice/store.js", "practice/practice.js", "practice/drill.js"]],
  ];
  var loading = {};
  function need(names) {
    // fetched in parallel, run in order (practice.js reads store.js's window.qbPractice when it starts)
    return Promise.all(names.map(function (name) {
      if (!loading[name]) loading[name] = add(assets + name);
      return loading[name];
    }));
  }
  function scripts() {
    NEEDS.forEach(function (n) {
      var wanted = document.querySelector(n[0]) || (n[1][0] === "paywall.js" && /^#license=/.test(location.hash));
      if (wanted) need(n[1]).catch(function () { /* a failed load leaves the page as served */ });
    });
  }

  function page() { scripts(); search(); label(); }
  if (window.document$) {
    window.document$.subscribe(page);
  } else {
    document.addEventListener("DOMContentLoaded", page);
  }
})();
