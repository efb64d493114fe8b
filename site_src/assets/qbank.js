// qbank: the loader of the scripts only some pages use (the search page's UI, the paywall, the practice
// tests and drills), and labels for controls the theme adds. Math needs no script: it is MathML, typeset at
// build time.
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
  // navigation they stay loaded and follow later pages through document$): the search UI on the search
  // page; the paywall where a page has a sealed section, an unlock button, a count of unlocked questions or
  // a license link; the practice scripts where it has a test, a drill or the practice record. Other pages
  // run none of them (bench/lighthouse.py).
  var NEEDS = [
    ["#qb-search", ["search.js"]],
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
  // The paywall waits for the page's load and an idle moment (at most 1 s more): its fetch, its start and
  // its IndexedDB read stay out of the work that blocks a phone while the page loads (bench/lighthouse.py).
  // Its unlock buttons are hidden until it binds them, so no click is lost.
  var IDLE = { "paywall.js": true };
  var loaded = document.readyState === "complete" ? Promise.resolve() : new Promise(function (resolve) {
    window.addEventListener("load", function () { resolve(); }, { once: true });
  });
  function idle() {
    return loaded.then(function () {
      return new Promise(function (resolve) {
        if (window.requestIdleCallback) window.requestIdleCallback(function () { resolve(); }, { timeout: 1000 });
        else setTimeout(resolve, 1);
      });
    });
  }
  function scripts() {
    NEEDS.forEach(function (n) {
      var wanted = document.querySelector(n[0]) || (n[1][0] === "paywall.js" && /^#license=/.test(location.hash));
      if (!wanted) return;
      var when = IDLE[n[1][0]] ? idle() : Promise.resolve();
      when.then(function () { return need(n[1]); }).catch(function () { /* a failed load leaves the page as served */ });
    });
  }

  function page() { scripts(); label(); }
  if (window.document$) {
    window.document$.subscribe(page);
  } else {
    document.addEventListener("DOMContentLoaded", page);
  }
})();
