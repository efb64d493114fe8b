// qbank: typeset math with self-hosted KaTeX, fetched only on pages that contain math.
(function () {
  "use strict";
  var base = document.currentScript.src.replace(/qbank\.js(\?.*)?$/, "katex/");
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

  // The paywall calls this again after it decrypts a section.
  window.qbankTypeset = typeset;
  if (window.document$) {
    window.document$.subscribe(function () { typeset(); });
  } else {
    document.addEventListener("DOMContentLoaded", function () { typeset(); });
  }
})();
