// Code drills: the reader edits the starter and runs the tests in a worker with Pyodide, fetched from
// this site only when Run is pressed. Public tests come from the page; the edge-case tests and the
// reference solution from the section the reader's license opens.
(function () {
  "use strict";
  const BASE = new URL(".", document.currentScript.src); // .../assets/practice/
  const LIMIT_MS = 20000; // a run longer than this is stopped (an infinite loop in an attempt)
  let worker = null;
  let ready = null;
  let seq = 0;
  const waiting = new Map();

  function startWorker() {
    worker = new Worker(new URL("drill-worker.js", BASE));
    ready = new Promise((resolve, reject) => {
      worker.onmessage = (e) => {
        const m = e.data;
        if (m.type === "ready") resolve();
        else if (m.type === "load-error") reject(new Error(m.message));
        else if (waiting.has(m.id)) { waiting.get(m.id)(m); waiting.delete(m.id); }
      };
      worker.onerror = (e) => reject(new Error(e.message || "the Python worker failed"));
    });
    worker.postMessage({ type: "load", base: BASE.href });
  }

  function runIn(code, suites) {
    const id = ++seq;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        waiting.delete(id);
        worker.terminate();
        worker = null;
        resolve({ timeout: true });
      }, LIMIT_MS);
      waiting.set(id, (m) => { clearTimeout(timer); resolve(m); });
      worker.postMessage({ type: "run", id, code, suites });
    });
  }

  function codeAfter(root, headingId) {
    const h = root.querySelector(`[id="${headingId}"]`);
    for (let n = h && h.nextElementSibling; n; n = n.nextElementSibling) {
      if (/^H[1-6]$/.test(n.tagName)) break;
      const code = n.matches("pre") ? n.querySelector("code") : n.querySelector("pre code");
      if (code) return code.textContent;
    }
    return null;
  }

  function sealedParts() {
    for (const sec of document.querySelectorAll(".qb-premium.qb-unlocked, .qb-preview-premium")) {
      const edge = codeAfter(sec, "edge-case-tests");
      if (edge) return { edge, reference: codeAfter(sec, "reference-solution") };
    }
    return null;
  }

  function setup(box) {
    if (box.dataset.qbpReady) return;
    box.dataset.qbpReady = "1";
    const slug = box.dataset.qbpDrill;
    const editor = box.querySelector(".qbp-editor");
    const starter = editor.value;
    const status = box.querySelector(".qbp-run-status");
    const results = box.querySelector(".qbp-results");
    const run = box.querySelector(".qbp-run");
    const publicCode = document.querySelector(".qbp-public pre code");
    let saveTimer = null;
    const save = (extra) => window.qbPractice.saveDrill({ drill: slug, topic: box.dataset.qbpTopic, code: editor.value,
      at: new Date().toISOString(), ...extra }).catch(() => {});
    window.qbPractice.drill(slug).then((d) => {
      if (d && d.code && editor.value === starter) editor.value = d.code;
      if (d && d.summary) status.textContent = `Last run on this device: ${d.summary}`;
    }).catch(() => {});
    editor.addEventListener("input", () => { clearTimeout(saveTimer); saveTimer = setTimeout(() => save({}), 400); });
    editor.addEventListener("keydown", (e) => {
      if (e.key === "Tab" && !e.shiftKey && !e.ctrlKey && !e.metaKey) {
        e.preventDefault();
        editor.setRangeText("    ", editor.selectionStart, editor.selectionEnd, "end");
      }
    });
    box.querySelector(".qbp-reset").addEventListener("click", () => { editor.value = starter; save({}); });
    const addReference = () => {
      const parts = sealedParts();
      if (!parts || !parts.reference || box.querySelector(".qbp-use-reference")) return;
      const b = document.createElement("button");
      b.type = "button";
      b.className = "md-button qbp-use-reference";
      b.textContent = "Load the reference solution";
      b.addEventListener("click", () => { editor.value = parts.reference; save({}); });
      run.after(" ", b);
    };
    addReference();
    document.addEventListener("qbank:unlocked", addReference);
    run.addEventListener("click", async () => {
      run.disabled = true;
      const suites = [["public_tests", publicCode ? publicCode.textContent : ""]];
      const parts = sealedParts();
      if (parts) suites.push(["edge_tests", parts.edge]);
      const t0 = performance.now();
      try {
        if (!worker) { status.textContent = "Loading Python (first run only)…"; startWorker(); }
        await ready;
        status.textContent = "Running the tests…";
        const m = await runIn(editor.value, suites);
        if (m.timeout) { status.textContent = `Stopped after ${LIMIT_MS / 1000} s: does your code loop forever?`; return; }
        if (m.error) { status.textContent = `Python error: ${m.error}`; return; }
        results.replaceChildren(...m.results.map((r) => {
          const li = document.createElement("li");
          li.className = r.ok ? "qbp-pass" : "qbp-fail";
          li.dataset.qbpSuite = r.suite;
          li.textContent = `${r.ok ? "✓" : "✗"} ${r.suite}.${r.name}${r.ok ? "" : ` — ${r.message}`}`;
          return li;
        }));
        const passed = m.results.filter((r) => r.ok).length;
        const summary = `${passed} of ${m.results.length} tests pass${parts ? "" : " (public tests; the edge cases open with a license)"}.`;
        status.textContent = summary;
        box.dataset.qbpFirstResultMs = String(Math.round(performance.now() - t0));
        save({ summary, allPassed: parts ? passed === m.results.length : false });
      } catch (err) {
        status.textContent = `Python could not start: ${err.message}`;
        worker = null;
      } finally { run.disabled = false; }
    });
  }

  function page() { document.querySelectorAll(".qbp-drill").forEach(setup); }
  if (window.document$ && typeof window.document$.subscribe === "function") window.document$.subscribe(page);
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", page);
  else page();
})();
