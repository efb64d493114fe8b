// The reader's practice record, kept in this browser only (IndexedDB): test attempts and drill drafts.
(function () {
  "use strict";
  const NAME = "qbank-practice";
  function open() {
    return new Promise((resolve, reject) => {
      const req = indexedDB.open(NAME, 1);
      req.onupgradeneeded = () => {
        const db = req.result;
        if (!db.objectStoreNames.contains("attempts")) db.createObjectStore("attempts", { keyPath: "id", autoIncrement: true });
        if (!db.objectStoreNames.contains("drills")) db.createObjectStore("drills", { keyPath: "drill" });
      };
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
  }
  async function run(store, mode, fn) {
    const db = await open();
    return new Promise((resolve, reject) => {
      const tx = db.transaction(store, mode);
      let out;
      const req = fn(tx.objectStore(store));
      if (req) req.onsuccess = () => { out = req.result; };
      tx.oncomplete = () => { db.close(); resolve(out); };
      tx.onerror = () => { db.close(); reject(tx.error); };
      tx.onabort = () => { db.close(); reject(tx.error); };
    });
  }
  window.qbPractice = {
    attempts: () => run("attempts", "readonly", (s) => s.getAll()),
    addAttempt: (a) => run("attempts", "readwrite", (s) => s.add(a)),
    drill: (slug) => run("drills", "readonly", (s) => s.get(slug)),
    drills: () => run("drills", "readonly", (s) => s.getAll()),
    // A save merges into the drill's record (one transaction), so a draft saved after a run keeps the run's summary.
    saveDrill: (d) => run("drills", "readwrite", (s) => {
      const got = s.get(d.drill);
      got.onsuccess = () => { s.put({ ...(got.result || {}), ...d }); };
      return null;
    }),
    clear: async () => { await run("attempts", "readwrite", (s) => s.clear()); await run("drills", "readwrite", (s) => s.clear()); },
  };
})();
