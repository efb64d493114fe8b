// qbank: the search page's Pagefind UI. Math needs no script: it is MathML, typeset at build time.
(function () {
  "use strict";
  var assets = document.currentScript.src.replace(/qbank\.js(\?.*)?$/, "");

  function add(src) {
    return new Promise(function (resolve, reject) {
      var el = document.createElement("script");
      el.src = src;
      el.onload = resolve;
      el.onerror = reject;
      document.head.appendChild(el);
    });
  }

  // The search page: Pagefind's UI is loaded from this file, because the Content-Security-Policy
  // allows no script in page content. Premium text is never indexed: it is not in the built pages.
  var pagefind = null;
  function search() {
    var el = document.getElementById("qb-search");
    if (!el || el.dataset.qbReady) return;
    el.dataset.qbReady = "1";
    pagefind = pagefind || add(assets.replace(/assets\/$/, "pagefind/") + "pagefind-ui.js");
    pagefind.then(function () {
      var ui = new window.PagefindUI({
        element: "#qb-search", showSubResults: true, showImages: false, resetStyles: false,
        // every result says what it is: Question, Topic, Concept or Company (data-pagefind-meta on each page)
        processResult: function (result) {
          if (result.meta && result.meta.type) result.meta.title = result.meta.type + " · " + result.meta.title;
          return result;
        }
      });
      // the header's search box submits here as ?q=...
      var q = new URLSearchParams(location.search).get("q");
      if (q) ui.triggerSearch(q);
    });
  }

  // Labels for controls that scripts add after load (axe-core: every landmark and field named): the
  // theme's code-block navs and Pagefind's search field.
  function label() {
    document.querySelectorAll("nav.md-code__nav").forEach(function (nav, i) {
      nav.setAttribute("aria-label", "Code block " + (i + 1) + " actions");
    });
    var input = document.querySelector(".pagefind-ui__search-input:not([aria-label])");
    if (input) input.setAttribute("aria-label", "Search questions, topics, concepts and companies");
  }
  // one relabel per burst of DOM changes (the theme adds code navs, Pagefind its field, after load)
  var pending = false;
  new MutationObserver(function () {
    if (pending) return;
    pending = true;
    setTimeout(function () { pending = false; label(); }, 50);
  }).observe(document.body, { childList: true, subtree: true });

  function page() { search(); label(); }
  if (window.document$) {
    window.document$.subscribe(page);
  } else {
    document.addEventListener("DOMContentLoaded", page);
  }
})();
