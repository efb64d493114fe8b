// Practice tests taken in the page: start, timer, answers with units, submit, score, per-item review.
// Free tests carry their items in data-qbp-data; a premium test's items arrive sealed and are read
// from the section the paywall opens with the reader's license ("qbank:unlocked").
(function () {
  "use strict";
  const store = () => window.qbPractice;

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else node.setAttribute(k, v);
    }
    for (const kid of kids) if (kid != null) node.append(kid);
    return node;
  }

  function decimals(step) {
    if (step >= 1) return 0;
    return Math.min(12, Math.ceil(-Math.log10(step) - 1e-9));
  }
  function fmt(value, step) {
    const rounded = Math.round(value / step) * step;
    return rounded.toLocaleString("en-US", { minimumFractionDigits: decimals(step), maximumFractionDigits: decimals(step) });
  }
  function fmtEvidence(e) {
    const abs = Math.abs(e.value);
    const digits = abs === 0 ? 0 : Math.max(0, Math.min(6, 3 - Math.floor(Math.log10(abs))));
    return `${e.value.toLocaleString("en-US", { maximumFractionDigits: digits })}${e.unit ? " " + e.unit : ""}`;
  }
  function parseNumber(text) {
    const t = String(text || "").trim().replace(/[,\s_]/g, "");
    if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t)) return null;
    return Number(t);
  }

  function grade(item, answer) {
    if (item.kind === "numeric") {
      const x = parseNumber(answer);
      return x !== null && Math.abs(x - item.key) <= item.precision / 2 + Math.abs(item.key) * 1e-12;
    }
    if (item.kind === "order") return Array.isArray(answer) && answer.every((v, i) => v === item.key[i]);
    return answer === item.key;
  }

  function field(item, i) {
    const name = `qbp-${i}`;
    const box = el("fieldset", { class: "qbp-item", "data-qbp-index": String(i) });
    box.append(el("legend", { text: `${i + 1}. ${item.prompt}` }));
    if (item.kind === "numeric") {
      const id = `${name}-x`;
      const input = el("input", { id, name, type: "text", inputmode: "decimal", autocomplete: "off", class: "qbp-number" });
      box.append(el("p", { class: "qbp-numeric" }, el("label", { for: id, class: "qbp-sr", text: "Your answer" }), input,
        el("span", { class: "qbp-unit", text: item.unit || "(plain number)" })));
      box.append(el("p", { class: "qbp-hint", text: `To the nearest ${fmt(item.precision, item.precision)}${item.unit ? " " + item.unit : ""}.` }));
    } else if (item.kind === "order") {
      const list = el("ol", { class: "qbp-order" });
      item.entries.forEach((_, pos) => {
        const select = el("select", { name: `${name}-${pos}`, "aria-label": `Position ${pos + 1}` });
        select.append(el("option", { value: "", text: "choose…" }));
        item.entries.forEach((text, j) => select.append(el("option", { value: String(j), text })));
        list.append(el("li", {}, select));
      });
      box.append(list);
    } else {
      const list = el("ul", { class: "qbp-options" });
      item.options.forEach((o, j) => {
        const id = `${name}-${j}`;
        list.append(el("li", {}, el("input", { type: "radio", id, name, value: String(j) }), el("label", { for: id, text: ` ${o.text}` })));
      });
      box.append(list);
    }
    return box;
  }

  function answerOf(form, item, i) {
    const name = `qbp-${i}`;
    if (item.kind === "numeric") return form.elements[name].value;
    if (item.kind === "order") return item.entries.map((_, pos) => {
      const v = form.elements[`${name}-${pos}`].value;
      return v === "" ? null : Number(v);
    });
    const picked = form.querySelector(`input[name="${name}"]:checked`);
    return picked ? Number(picked.value) : null;
  }

  function shown(item, answer) {
    if (item.kind === "numeric") return answer === "" || answer == null ? "no answer" : `${answer}${item.unit ? " " + item.unit : ""}`;
    if (item.kind === "order") return answer.some((v) => v == null) ? "incomplete" : answer.map((j) => item.entries[j]).join(" → ");
    return answer == null ? "no answer" : item.options[answer].text;
  }
  function correctText(item) {
    if (item.kind === "numeric") return `${fmt(item.key, item.precision)}${item.unit ? " " + item.unit : ""}`;
    if (item.kind === "order") return item.key.map((j) => item.entries[j]).join(" → ");
    return item.options[item.key].text;
  }

  function review(data, answers, marks) {
    const list = el("ol", { class: "qbp-review" });
    data.items.forEach((item, i) => {
      const ok = marks[i];
      const li = el("li", { class: ok ? "qbp-right" : "qbp-wrong", "data-qbp-ok": ok ? "1" : "0" });
      li.append(el("p", { class: "qbp-review__prompt" }, el("strong", { text: ok ? "✓ Correct. " : "✗ Not quite. " }), item.prompt));
      li.append(el("p", { text: `Your answer: ${shown(item, answers[i])}` }));
      if (!ok) li.append(el("p", { text: `Answer: ${correctText(item)}` }));
      if (!ok && item.kind !== "numeric" && item.kind !== "order" && answers[i] != null && item.options[answers[i]].why)
        li.append(el("p", { class: "qbp-why", text: `Why not: ${item.options[answers[i]].why}` }));
      li.append(el("p", { class: "qbp-explanation", text: item.explanation }));
      if (item.kind === "numeric") li.append(el("p", { class: "qbp-source", text: `Key: ${item.source}, computed by its verification script in this build.` }));
      if (item.evidence) li.append(el("p", { class: "qbp-source", text: "Verified values: " + item.evidence.map((e) => `${e.ref.split(":")[1]} = ${fmtEvidence(e)}`).join("; ") }));
      if (item.see) li.append(el("p", {}, el("a", { href: item.see, text: "Read the worked answer" })));
      list.append(li);
    });
    return list;
  }

  async function showBest(root, slug) {
    const out = root.querySelector(".qbp-best");
    try {
      const mine = (await store().attempts()).filter((a) => a.test === slug);
      if (!mine.length) { out.textContent = "No attempts on this device yet."; return; }
      const best = mine.reduce((a, b) => (b.score / b.total > a.score / a.total ? b : a));
      out.textContent = `Best: ${best.score} / ${best.total} · ${mine.length} attempt${mine.length === 1 ? "" : "s"} on this device.`;
    } catch { out.textContent = "Your browser does not keep practice records here (IndexedDB is off)."; }
  }

  function mmss(s) { return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`; }

  function setup(root, data) {
    if (root.dataset.qbpReady) return;
    root.dataset.qbpReady = "1";
    const start = root.querySelector(".qbp-start");
    const form = root.querySelector(".qbp-form");
    const timer = root.querySelector(".qbp-timer");
    const result = root.querySelector(".qbp-result");
    start.disabled = false;
    let tick = null;
    let began = 0;
    const finish = async () => {
      if (tick) clearInterval(tick);
      tick = null;
      const seconds = Math.round((Date.now() - began) / 1000);
      const answers = data.items.map((item, i) => answerOf(form, item, i));
      const marks = data.items.map((item, i) => grade(item, answers[i]));
      const score = marks.filter(Boolean).length;
      form.hidden = true;
      timer.hidden = true;
      result.hidden = false;
      result.replaceChildren(
        el("h2", { class: "qbp-score", text: `Score: ${score} / ${data.items.length}` }),
        el("p", { text: `Time: ${mmss(seconds)} of ${data.minutes}:00.` }),
        review(data, answers, marks));
      start.textContent = "Take it again";
      start.hidden = false;
      try {
        await store().addAttempt({ test: data.slug, title: data.title, topic: root.dataset.qbpTopic || null,
          score, total: data.items.length, seconds, at: new Date().toISOString(), answers });
      } catch { /* private mode: the score is still shown */ }
      await showBest(root, data.slug);
      root.dispatchEvent(new CustomEvent("qbp:scored", { bubbles: true, detail: { score } }));
    };
    start.addEventListener("click", () => {
      form.replaceChildren(...data.items.map(field), el("p", {}, el("button", { type: "submit", class: "md-button md-button--primary qbp-submit", text: "Submit answers" })));
      form.hidden = false;
      result.hidden = true;
      start.hidden = true;
      timer.hidden = false;
      began = Date.now();
      const limit = data.minutes * 60;
      const show = () => {
        const left = Math.max(0, limit - Math.floor((Date.now() - began) / 1000));
        timer.textContent = `Time left: ${mmss(left)}`;
        if (left === 0) finish();
      };
      show();
      tick = setInterval(show, 1000);
      form.querySelector("input, select")?.focus();
    });
    form.addEventListener("submit", (e) => { e.preventDefault(); finish(); });
  }

  function sealedData(root) {
    // the unlocked section holds the items as a JSON code block; it becomes the test, not a listing
    for (const sec of document.querySelectorAll(".qb-premium.qb-unlocked, .qb-preview-premium")) {
      const code = sec.querySelector("pre code");
      if (!code) continue;
      try {
        const data = JSON.parse(code.textContent);
        if (data && data.slug === root.dataset.qbpSlug) {
          sec.querySelector(".highlight, pre")?.remove();
          sec.append(el("p", { class: "qbp-unsealed", text: "The test's items are unlocked above." }));
          return data;
        }
      } catch { /* not ours */ }
    }
    return null;
  }

  async function hub(box) {
    const summary = box.querySelector(".qbp-progress__summary");
    const topics = JSON.parse(box.dataset.qbpTopics || "{}");
    const render = async () => {
      try {
        const all = await store().attempts();
        const drills = await store().drills();
        if (!all.length && !drills.length) { summary.textContent = "No attempts on this device yet."; return; }
        const list = el("ul", { class: "qbp-progress__topics" });
        for (const [slug, t] of Object.entries(topics)) {
          const mine = all.filter((a) => a.topic === slug);
          if (!mine.length) continue;
          const taken = new Set(mine.map((a) => a.test)).size;
          const best = Math.max(...mine.map((a) => a.score / a.total));
          list.append(el("li", { "data-qbp-topic": slug, text: `${t.title}: ${taken} of ${t.tests} test${t.tests === 1 ? "" : "s"} taken, best ${Math.round(best * 100)}%` }));
        }
        const passed = drills.filter((d) => d.allPassed).length;
        summary.replaceChildren(el("span", { text: `${all.length} attempt${all.length === 1 ? "" : "s"}; ${passed} drill${passed === 1 ? "" : "s"} passed on this device.` }), list);
      } catch { summary.textContent = "Your browser does not keep practice records here (IndexedDB is off)."; }
    };
    await render();
    box.querySelector(".qbp-export").addEventListener("click", async () => {
      const body = { format: 1, exported: new Date().toISOString(), attempts: await store().attempts(), drills: await store().drills() };
      const url = URL.createObjectURL(new Blob([JSON.stringify(body, null, 1)], { type: "application/json" }));
      const a = el("a", { href: url, download: "qbank-practice.json" });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
    });
    const del = box.querySelector(".qbp-delete");
    del.addEventListener("click", async () => {
      if (del.dataset.armed !== "1") { del.dataset.armed = "1"; del.textContent = "Press again to delete every attempt and draft"; return; }
      del.dataset.armed = "";
      del.textContent = "Delete my attempts";
      await store().clear();
      await render();
    });
  }

  function page() {
    for (const root of document.querySelectorAll(".qbp-test")) {
      showBest(root, root.dataset.qbpSlug);
      if (root.dataset.qbpData) setup(root, JSON.parse(root.dataset.qbpData));
      else { const d = sealedData(root); if (d) setup(root, d); }
    }
    for (const box of document.querySelectorAll(".qbp-progress")) hub(box);
  }
  document.addEventListener("qbank:unlocked", () => {
    for (const root of document.querySelectorAll(".qbp-test[data-qbp-sealed]")) { const d = sealedData(root); if (d) setup(root, d); }
  });
  if (window.document$ && typeof window.document$.subscribe === "function") window.document$.subscribe(page);
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", page);
  else page();
})();
