// qbank: typeset math with self-hosted KaTeX, fetched only on pages that contain math.
(function () {
  "use strict";
  var assets = document.currentScript.src.replace(/qbank\.js(\?.*)?$/, "");
  var base = assets + "katex/";
  var loading = null;

  function add(tag, attrs) {
    return new Promise(function (resolve, reject) {
      var el = document.createElement(tag);
      Object.keys(attrs).forEach(function (k) { el[k] = attrs[k]; });
      el.onload = resolve;
      el.onerror = reject;
      document.head.appendChild(el);
    });
  }

  function load() {
    if (!loading) {
      add("link", { rel: "stylesheet", href: base + "katex.min.css" });
      loading = add("script", { src: base + "katex.min.js" }).then(function () {
        return add("script", { src: base + "auto-render.min.js" });
      });
    }
    return loading;
  }

  function typeset(root) {
    var nodes = (root || document).querySelectorAll(".arithmatex");
    if (!nodes.length) return Promise.resolve();
    return load().then(function () {
      nodes.forEach(function (el) {
        window.renderMathInElement(el, {
          delimiters: [
            { left: "\\(", right: "\\)", display: false },
            { left: "\\[", right: "\\]", display: true }
          ],
          throwOnError: false
        });
      });
    });
  }

  // The search page: Pagefind's UI is loaded from this file, because the Content-Security-Policy
  // allows no script in page content. Premium text is never indexed: it is not in the built pages.
  var pagefind = null;
  function search() {
    var el = document.getElementById("qb-search");
    if (!el || el.dataset.qbReady) return;
    el.dataset.qbReady = "1";
    var ui = assets.replace(/assets\/$/, "pagefind/");
    pagefind = pagefind || add("script", { src: ui + "pagefind-ui.js" });
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

  // The paywall calls this again after it decrypts a section.
  window.qbankTypeset = typeset;
  function page() { typeset(); search(); }
  if (window.document$) {
    window.document$.subscribe(page);
  } else {
    document.addEventListener("DOMContentLoaded", page);
  }
})();
