// The drill runner's worker: Pyodide from this site's own origin, the shared test harness, one run per message.
"use strict";
let py = null;
let runSuite = null;

self.onmessage = async (e) => {
  const m = e.data;
  if (m.type === "load") {
    try {
      importScripts(new URL("pyodide/pyodide.js", m.base).href);
      py = await self.loadPyodide({ indexURL: new URL("pyodide/", m.base).href });
      const harness = await (await fetch(new URL("harness.py", m.base))).text();
      const ns = py.globals.get("dict")();
      py.runPython(harness, { globals: ns });
      runSuite = ns.get("run_suite");
      self.postMessage({ type: "ready" });
    } catch (err) {
      self.postMessage({ type: "load-error", message: String(err && err.message || err) });
    }
    return;
  }
  if (m.type === "run") {
    try {
      const out = runSuite(m.code, py.toPy(m.suites));
      const results = out.toJs({ dict_converter: Object.fromEntries });
      out.destroy();
      self.postMessage({ id: m.id, results });
    } catch (err) {
      self.postMessage({ id: m.id, error: String(err && err.message || err).slice(-400) });
    }
  }
};
