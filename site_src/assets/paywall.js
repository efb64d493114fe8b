/* qbank paywall: premium sections unlocked in the browser with a license key and WebCrypto.
 *
 * Formats mirror src/qbank/paywall (keys.py, release.py, slots.py, encrypt.py); change them together.
 * Keyslots live at assets/keyslots/<epoch id>/<shard>.json, written by the deploy job, not the build; they
 * wrap the epoch key, from which each premium section's own key is derived (src/qbank/epoch/sections.py).
 * The printed key is never stored: it derives (HKDF-SHA-256) a public identifier and a
 * key-encryption key, and only those are kept on the device, the key-encryption key as a
 * non-extractable CryptoKey in IndexedDB, so no script can read its bytes back out.
 */
(() => {
  "use strict";

  const ASSETS = new URL(".", document.currentScript.src); // .../assets/
  const PRICING_URL = new URL("../pricing/", ASSETS).href; // where "Get a key" leads: price, checkout, refunds
  const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  const KEY_CHARS = 32;
  const SECRET_BYTES = 16;
  const SHARD_CHARS = 2;
  const enc = new TextEncoder();
  const MSG = {
    chars: (bad) => `A license key has no ${bad} in it. Check it against your purchase email.`,
    length: (n) => `A license key has ${KEY_CHARS} characters after “QB-”; this one has ${n}.`,
    checksum: () => "This key has a typo: its checksum does not match. Check each character against your purchase email.",
    unknown: () => "This key is not valid for this site. Check that you copied the whole key.",
    expired: (on) => `This license expired on ${on}. Buy another 6 months to keep reading.`,
    revoked: () => "This license has been revoked. Contact us if you think this is a mistake.",
    tampered: () => "The premium text failed its integrity check and was not shown (a file was altered or damaged). Reload the page; if this persists, contact us.",
    network: () => "Could not load the premium text. Check your connection and try again.",
    stale: () => "The site was just updated. Reload the page to read the new version.",
    insecure: () => "This browser cannot decrypt here (WebCrypto needs https).",
  };

  class PaywallError extends Error {
    constructor(reason, message) { super(message); this.reason = reason; }
  }

  // ---- key format (keys.py) ----
  function normalise(text) {
    const typed = text.replace(/\s/g, "").toUpperCase();
    let s = typed.replace(/-/g, "");
    // a leading QB is the prefix when its dash follows, or when without dashes it is not a body's 32 characters (keys.py)
    if (s.startsWith("QB") && (typed.startsWith("QB-") || s.length !== KEY_CHARS)) s = s.slice(2);
    return s.replace(/O/g, "0").replace(/[IL]/g, "1");
  }

  async function parseKey(text) {
    const s = normalise(text);
    const bad = [...new Set([...s].filter((c) => !ALPHABET.includes(c)))];
    if (bad.length) throw new PaywallError("chars", MSG.chars(bad.map((c) => `“${c}”`).join(" ")));
    if (s.length !== KEY_CHARS) throw new PaywallError("length", MSG.length(s.length));
    const raw = new Uint8Array((KEY_CHARS * 5) / 8);
    let acc = 0, nbits = 0, j = 0;
    for (const c of s) {
      acc = (acc << 5) | ALPHABET.indexOf(c); nbits += 5;
      if (nbits >= 8) { nbits -= 8; raw[j++] = (acc >> nbits) & 0xff; acc &= (1 << nbits) - 1; }
    }
    const secret = raw.slice(0, SECRET_BYTES);
    const tag = enc.encode("qbank/license/v1/check");
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", concat(tag, secret)));
    for (let i = 0; i < 4; i++) {
      if (digest[i] !== raw[SECRET_BYTES + i]) throw new PaywallError("checksum", MSG.checksum());
    }
    return secret;
  }

  function concat(a, b) { const out = new Uint8Array(a.length + b.length); out.set(a); out.set(b, a.length); return out; }
  const hex = (buf) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");
  const unb64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

  // ---- derivation (HKDF-SHA-256: a high-entropy key needs no password hashing, see keys.py) ----
  async function derive(secret) {
    const ikm = await crypto.subtle.importKey("raw", secret, "HKDF", false, ["deriveBits", "deriveKey"]);
    const params = (info) => ({ name: "HKDF", hash: "SHA-256", salt: enc.encode("qbank/license/v1"), info: enc.encode(info) });
    const id = hex(await crypto.subtle.deriveBits(params("qbank/id"), ikm, 128));
    const kek = await crypto.subtle.deriveKey(params("qbank/kek"), ikm, { name: "AES-KW", length: 256 }, false, ["unwrapKey"]);
    return { id, kek };
  }

  // ---- the device's credential: IndexedDB, non-extractable key ----
  const DB = "qbank-paywall", STORE = "cred", SLOT = "license";
  function db() {
    return new Promise((resolve, reject) => {
      const req = indexedDB.open(DB, 1);
      req.onupgradeneeded = () => req.result.createObjectStore(STORE);
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
  }
  async function store(mode, fn) {
    const d = await db();
    try {
      return await new Promise((resolve, reject) => {
        const tx = d.transaction(STORE, mode);
        const req = fn(tx.objectStore(STORE));
        tx.oncomplete = () => resolve(req.result);
        tx.onerror = () => reject(tx.error);
      });
    } finally { d.close(); }
  }
  const loadCred = () => store("readonly", (s) => s.get(SLOT)).catch(() => undefined);
  const saveCred = (cred) => store("readwrite", (s) => s.put(cred, SLOT));
  const dropCred = () => store("readwrite", (s) => s.delete(SLOT));

  // ---- keyslots and the release key ----
  const state = { cred: undefined, release: undefined, shards: new Map() };

  async function fetchJSON(url, fresh) {
    let res;
    try { res = await fetch(url, fresh ? { cache: "no-cache" } : {}); } catch { throw new PaywallError("network", MSG.network()); }
    if (!res.ok) throw new PaywallError(res.status === 404 ? "stale" : "network", res.status === 404 ? MSG.stale() : MSG.network());
    try { return await res.json(); } catch { throw new PaywallError("tampered", MSG.tampered()); }
  }

  // The page names its release: the ciphertext files it points at carry the id (a page cached at the edge
  // thus never meets another release's slots), and every page also says it in <meta name="qbank-release">.
  async function pageRelease() {
    const spot = document.querySelector(".qb-locked[data-qb-file]");
    if (spot) return (await fetchJSON(new URL(`premium/${spot.dataset.qbFile}`, ASSETS))).release;
    const meta = document.querySelector('meta[name="qbank-release"]');
    return meta ? meta.content : undefined;
  }

  // A slot entry is [k, m] (slots.py): k = AES-KW(KEK, K), m = nonce || AES-GCM(K, status). K is the release
  // key for a license that may read this release, a status key that opens only m for an ended one.
  async function releaseKey(cred, releaseId, fresh = false) {
    if (!releaseId || !/^[0-9a-f]+$/.test(releaseId)) throw new PaywallError("stale", MSG.stale());
    const shardName = cred.id.slice(0, SHARD_CHARS);
    const cacheKey = `${releaseId}/${shardName}`;
    let shard = fresh ? undefined : state.shards.get(cacheKey);
    if (!shard) {
      shard = await fetchJSON(new URL(`keyslots/${releaseId}/${shardName}.json`, ASSETS), fresh);
      state.shards.set(cacheKey, shard);
    }
    if (shard.release !== releaseId) throw new PaywallError("tampered", MSG.tampered());
    const entry = shard.slots && shard.slots[cred.id];
    if (!entry) throw new PaywallError("unknown", MSG.unknown());
    let key, status;
    try {
      key = await crypto.subtle.unwrapKey("raw", unb64(entry[0]), cred.kek, "AES-KW", "AES-GCM", false, ["decrypt"]);
      const m = unb64(entry[1]);
      const plain = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: m.slice(0, 12), additionalData: enc.encode(`qbank/slot/v2|${releaseId}|${cred.id}`) },
        key, m.slice(12));
      status = JSON.parse(new TextDecoder().decode(plain));
    } catch { throw new PaywallError("tampered", MSG.tampered()); }
    if (status.s === "expired") throw new PaywallError("expired", MSG.expired(status.on));
    if (status.s !== "active") throw new PaywallError("revoked", MSG.revoked());
    // the next refresh drops an expired license's slot; until then the device already says so
    if (status.until && new Date().toISOString().slice(0, 10) >= status.until) {
      throw new PaywallError("expired", MSG.expired(status.until));
    }
    // the same key as an HKDF base: each section's content key is derived from it (epoch/sections.py)
    let base;
    try {
      base = await crypto.subtle.unwrapKey("raw", unb64(entry[0]), cred.kek, "AES-KW", "HKDF", false, ["deriveKey"]);
    } catch { throw new PaywallError("tampered", MSG.tampered()); }
    return { id: releaseId, key, base, until: status.until };
  }

  // A section's content key: HKDF-SHA-256 of the epoch key over the page, the section and its digest
  // (epoch/sections.py); one key per version of a section, so an edit never reuses one.
  function sectionKey(release, path, section, d) {
    if (typeof d !== "string" || !/^[0-9a-f]{32}$/.test(d)) throw new PaywallError("tampered", MSG.tampered());
    // names that would make the '|'-joined info and AAD ambiguous are refused (sections.py check_names)
    if (!/^[0-9]{1,6}$/.test(section) || !path.startsWith("/") || /[|\0]/.test(path)) {
      throw new PaywallError("tampered", MSG.tampered());
    }
    const params = { name: "HKDF", hash: "SHA-256", salt: enc.encode("qbank/epoch/v1"),
                     info: enc.encode(`qbank/section|${path}|${section}|${d}`) };
    return crypto.subtle.deriveKey(params, release.base, { name: "AES-GCM", length: 256 }, false, ["decrypt"]);
  }

  // ---- the page ----
  function pagePath() { return location.pathname.replace(/index\.html$/, ""); }

  async function openPage(release) {
    const spots = [...document.querySelectorAll(".qb-locked[data-qb-file]")];
    const files = new Map();
    for (const spot of spots) files.set(spot.dataset.qbFile, null);
    for (const name of files.keys()) files.set(name, await fetchJSON(new URL(`premium/${name}`, ASSETS)));
    for (const body of files.values()) if (body.release !== release.id) throw new PaywallError("stale", MSG.stale());
    const path = pagePath();
    const opened = [];
    for (const spot of spots) {
      const section = spot.dataset.qbSection;
      const sec = files.get(spot.dataset.qbFile).sections[section];
      if (!sec) throw new PaywallError("tampered", MSG.tampered());
      try {
        const plain = await crypto.subtle.decrypt(
          { name: "AES-GCM", iv: unb64(sec.n), additionalData: enc.encode(`qbank/v2|${path}|${section}|${sec.d}`) },
          await sectionKey(release, path, section, sec.d), unb64(sec.c));
        opened.push([spot, new TextDecoder().decode(plain)]);
      } catch { throw new PaywallError("tampered", MSG.tampered()); }
    }
    // all or nothing: a page never shows some sections decrypted next to a failed one
    for (const [spot, html] of opened) {
      const div = document.createElement("div");
      div.className = "qb-premium qb-unlocked";
      div.id = spot.id;
      div.dataset.qbSection = spot.dataset.qbSection;
      div.innerHTML = html; // authenticated by AES-GCM: it is the build's own HTML
      div.prepend(unlockedBar(release));
      spot.replaceWith(div);
      enhance(div);
    }
    return opened.length;
  }

  function unlockedBar(release) {
    const bar = document.createElement("p");
    bar.className = "qb-unlocked__bar";
    bar.textContent = release.until ? `Unlocked with your license (until ${release.until}). ` : "Unlocked with your license. ";
    const forget = document.createElement("button");
    forget.type = "button";
    forget.className = "qb-forget";
    forget.textContent = "Forget this device";
    forget.addEventListener("click", forgetDevice);
    bar.append(forget);
    return bar;
  }

  let codeCount = 0;
  function enhance(root) {
    // copy buttons, as mkdocs-material 9.8 builds them; its clipboard handler is delegated to
    // [data-clipboard-target], so a button added later works like the theme's own
    for (const code of root.querySelectorAll("pre > code")) {
      const pre = code.parentElement;
      if (pre.querySelector(":scope > .md-code__nav")) continue;
      if (!pre.id) pre.id = `__qb_code_${codeCount++}`;
      const nav = document.createElement("nav");
      nav.className = "md-code__nav";
      const button = document.createElement("button");
      button.className = "md-code__button";
      button.title = "Copy to clipboard";
      button.dataset.clipboardTarget = `#${pre.id} > code`;
      button.dataset.mdType = "copy";
      nav.append(button);
      pre.insertBefore(nav, code);
    }
    if (window.hljs) root.querySelectorAll("pre code:not(.hljs)").forEach((el) => window.hljs.highlightElement(el));
    if (window.MathJax && window.MathJax.typesetPromise) window.MathJax.typesetPromise([root]);
    else if (window.renderMathInElement) window.renderMathInElement(root);
    document.dispatchEvent(new CustomEvent("qbank:unlocked", { detail: { root } }));
  }

  function setCounts(unlocked) {
    // locked: what anyone may read (the free questions of a list); unlocked: all of them
    for (const el of document.querySelectorAll("[data-qb-unlock-count]")) {
      el.textContent = unlocked ? el.dataset.qbUnlockCount : el.dataset.qbFree || "0";
      el.closest(".qb-unlock-count")?.classList.toggle("qb-unlock-count--on", unlocked);
    }
  }

  function say(message, reason) {
    for (const el of document.querySelectorAll(".qb-locked__status")) {
      el.textContent = message;
      el.dataset.reason = reason || "";
    }
  }

  async function forgetDevice() {
    await dropCred();
    state.cred = undefined; state.release = undefined; state.shards.clear();
    location.reload();
  }

  // ---- dialog ----
  let dialog;
  function getDialog() {
    if (dialog && document.body.contains(dialog)) return dialog;
    dialog = document.createElement("dialog");
    dialog.className = "qb-dialog md-typeset";
    dialog.setAttribute("aria-labelledby", "qb-dialog-title");
    dialog.innerHTML = `
      <form method="dialog" class="qb-dialog__form">
        <h2 id="qb-dialog-title">Unlock premium sections</h2>
        <p>Enter the license key from your purchase email. It stays on this device.</p>
        <label for="qb-key">License key</label>
        <input id="qb-key" name="key" autocomplete="off" autocapitalize="characters" spellcheck="false"
               placeholder="QB-XXXX-XXXX-XXXX-XXXX-XXXX-XXXX-XXXX-XXXX">
        <p class="qb-dialog__error" role="alert"></p>
        <p class="qb-dialog__buy">No key yet? <a class="qb-dialog__get" href="${PRICING_URL}">Get a key</a>
          (price, what is included, refunds).</p>
        <div class="qb-dialog__actions">
          <button type="button" class="md-button qb-dialog__cancel">Cancel</button>
          <button type="submit" class="md-button md-button--primary qb-dialog__submit">Unlock</button>
        </div>
      </form>`;
    dialog.querySelector(".qb-dialog__cancel").addEventListener("click", () => dialog.close());
    dialog.querySelector("form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      submitKey(dialog.querySelector("#qb-key").value);
    });
    document.body.append(dialog);
    return dialog;
  }

  function openDialog() {
    const d = getDialog();
    d.querySelector(".qb-dialog__error").textContent = "";
    if (!d.open) d.showModal();
    d.querySelector("#qb-key").focus();
  }

  async function submitKey(text) {
    const d = getDialog();
    const err = d.querySelector(".qb-dialog__error");
    err.textContent = "";
    delete err.dataset.reason;
    try {
      if (!window.crypto || !crypto.subtle) throw new PaywallError("insecure", MSG.insecure());
      const cred = await derive(await parseKey(text)); // a typo is caught here, before any request
      const release = await releaseKey(cred, await pageRelease());
      // a browser without IndexedDB (some private modes) still unlocks this page view
      await saveCred(cred).catch(() => undefined);
      state.cred = cred; state.release = release;
      if (d.open) d.close();
      await unlock();
    } catch (e) {
      const reason = e instanceof PaywallError ? e.reason : "network";
      err.textContent = e instanceof PaywallError ? e.message : MSG.network();
      err.dataset.reason = reason;
      if (!d.open) d.showModal();
    }
  }

  async function unlock() {
    try {
      const releaseId = await pageRelease();
      if (!state.release || state.release.id !== releaseId) state.release = await releaseKey(state.cred, releaseId);
      setCounts(true);
      try {
        await openPage(state.release);
      } catch (e) {
        if (!(e instanceof PaywallError) || e.reason !== "stale") throw e;
        // a deploy happened since this page was fetched: read the slots again, bypassing caches
        state.release = await releaseKey(state.cred, await pageRelease(), true);
        await openPage(state.release);
      }
    } catch (e) {
      if (e instanceof PaywallError && e.reason !== "tampered" && e.reason !== "network") setCounts(false);
      say(e instanceof PaywallError ? e.message : MSG.network(), e instanceof PaywallError ? e.reason : "network");
    }
  }

  // ---- every page view (first load and each instant navigation) ----
  async function run() {
    for (const b of document.querySelectorAll(".qb-unlock-open")) {
      b.hidden = false;
      if (!b.dataset.qbBound) { b.dataset.qbBound = "1"; b.addEventListener("click", openDialog); }
    }
    const m = location.hash.match(/^#license=([^&]*)/);
    if (m) {
      // read once, then dropped from the address bar and history so it is not copied or shared
      history.replaceState(history.state, "", location.pathname + location.search);
      await submitKey(decodeURIComponent(m[1]));
      return;
    }
    if (!window.crypto || !crypto.subtle) { setCounts(false); return; }
    if (state.cred === undefined) state.cred = (await loadCred()) || null;
    if (!state.cred) { setCounts(false); return; }
    await unlock();
  }

  const start = () => run().catch(() => say(MSG.network(), "network"));
  if (window.document$ && typeof window.document$.subscribe === "function") window.document$.subscribe(start);
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
