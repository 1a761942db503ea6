// shoe-ctl dealer display: renders the public state pushed over /events, posts dealer inputs.
// No libraries, no network beyond this server. Text is set with textContent only.
"use strict";

const LED_NAMES = ["green", "amber", "blue", "white", "red"];
const SUITS = { c: "\u2663", d: "\u2666", h: "\u2665", s: "\u2660" };
const MUCKED = new Set(["folded", "killed", "dead"]);
let state = null;
let selected = null;

// A token may be given once as #token=... and is kept for this screen.
(function keepToken() {
  const m = location.hash.match(/token=([^&]+)/);
  if (m) { localStorage.setItem("shoeToken", decodeURIComponent(m[1])); history.replaceState(null, "", location.pathname); }
})();

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function cardEl(text, extra) {
  if (!text || text === "??") return el("span", "card back" + (extra ? " " + extra : ""), "??");
  const suit = text.slice(-1), rank = text.slice(0, -1);
  return el("span", "card " + suit + (extra ? " " + extra : ""), rank + (SUITS[suit] || suit));
}

function renderLeds(led) {
  const box = document.getElementById("leds");
  box.replaceChildren();
  const lit = new Set(led ? led.leds : []);
  for (const name of LED_NAMES) {
    const d = el("div", "led " + name);
    if (lit.has(name)) {
      d.classList.add("on");
      if (led.mode !== "steady") {
        d.classList.add(led.mode);
        d.style.setProperty("--period", ((led.on_ms + led.off_ms) / 1000 || 1) + "s");
      }
    }
    box.appendChild(d);
  }
  box.title = led ? led.name + " (" + led.mode + ")" : "off";
  box.dataset.pattern = led ? led.name : "";
}

function renderInstruction(ins) {
  const head = document.getElementById("instruction");
  const text = document.getElementById("ins-text");
  const detail = document.getElementById("ins-detail");
  if (!ins) { text.textContent = "Waiting"; detail.textContent = ""; renderLeds(null); head.dataset.signal = "idle"; return; }
  text.textContent = ins.text || ins.signal;
  const bits = [];
  if (ins.seat !== null && ins.seat !== undefined) bits.push("seat " + ins.seat);
  if (ins.face) bits.push(ins.face);
  if (ins.street) bits.push(ins.street + " street");
  if (ins.cards && ins.cards.length) bits.push("gather: " + ins.cards.join(", "));
  detail.textContent = bits.join(" \u00b7 ");
  head.dataset.signal = ins.signal;
  head.classList.toggle("attention", !!(ins.led && ins.led.attention));
  renderLeds(ins.led);
}

function renderAlerts(alerts) {
  const box = document.getElementById("alerts");
  box.replaceChildren();
  for (const a of alerts || []) {
    const row = el("div", "alert");
    row.dataset.id = a.id;
    row.dataset.code = a.code;
    row.appendChild(el("span", "code", a.code));
    const where = [a.street, a.seat ? "seat " + a.seat : null].filter(Boolean).join(", ");
    row.appendChild(el("span", "msg", a.message + (where ? " (" + where + ")" : "")));
    const b = el("button", "ack", "Acknowledge");
    b.addEventListener("click", () => send("/ack", { id: a.id }));
    row.appendChild(b);
    box.appendChild(row);
  }
}

function renderSeats(s) {
  const box = document.getElementById("table");
  box.replaceChildren();
  const target = s.instruction ? s.instruction.seat : null;
  for (const seat of s.seats || []) {
    const d = el("div", "seat " + seat.status);
    d.dataset.seat = seat.seat;
    if (seat.seat === selected) d.classList.add("selected");
    if (seat.seat === target) d.classList.add("target");
    const head = el("div", "head");
    head.appendChild(el("span", "num", seat.seat));
    head.appendChild(el("span", "status " + seat.status, seat.status));
    d.appendChild(head);
    const cards = el("div", "cards");
    for (let i = 0; i < (seat.down_count || 0); i++) {
      const shown = seat.down && seat.down[i];
      cards.appendChild(shown ? cardEl(shown, "down") : cardEl(null));
    }
    for (const c of seat.up || []) cards.appendChild(cardEl(c));
    d.appendChild(cards);
    const tags = el("div", "tags");
    if (seat.bring_in) tags.appendChild(el("span", "bring-in", "BRING-IN"));
    if (seat.first_to_act) tags.appendChild(el("span", "first", "FIRST TO ACT"));
    if (seat.open_pair) tags.appendChild(el("span", "pair", "OPEN PAIR"));
    d.appendChild(tags);
    d.addEventListener("click", () => { selected = selected === seat.seat ? null : seat.seat; render(); });
    box.appendChild(d);
  }
}

function renderSide(s) {
  document.getElementById("hand").textContent = s.hand !== null && s.hand !== undefined ? "Hand " + s.hand : "No hand";
  document.getElementById("game").textContent = [s.game, s.rules].filter(Boolean).join(" / ");
  document.getElementById("street").textContent = s.street || "";
  const stub = s.stub;
  const gauge = document.getElementById("gauge");
  const fc = document.getElementById("forecast");
  if (stub) {
    document.getElementById("stub-count").textContent = stub.count;
    document.getElementById("stub-required").textContent = stub.required;
    const full = Math.max(stub.count, stub.required, 1) * 1.25;
    document.getElementById("gauge-fill").style.width = (100 * stub.count / full) + "%";
    document.getElementById("gauge-mark").style.left = (100 * stub.required / full) + "%";
    gauge.classList.toggle("short", stub.count < stub.required);
    fc.hidden = !stub.forecast;
    fc.textContent = stub.forecast ? "Short stub expected on " + stub.forecast + " street" : "";
  } else {
    document.getElementById("stub-count").textContent = "–";
    document.getElementById("stub-required").textContent = "–";
    fc.hidden = true;
  }
  const com = document.getElementById("community");
  com.replaceChildren();
  com.hidden = !s.community;
  if (s.community) { com.appendChild(el("span", null, "Community ")); com.appendChild(cardEl(s.community)); }
  document.getElementById("shoe-status").textContent = s.shoe ? s.shoe.status : "–";
  document.getElementById("shoe-detail").textContent = s.shoe && s.shoe.detail ? s.shoe.detail : "";
}

function renderButtons() {
  document.getElementById("selected").textContent = selected === null ? "none" : selected;
  for (const b of document.querySelectorAll(".buttons button[data-needs-seat]")) b.disabled = selected === null;
}

function render() {
  if (!state) return;
  renderInstruction(state.instruction);
  renderAlerts(state.alerts);
  renderSeats(state);
  renderSide(state);
  renderButtons();
  document.body.dataset.version = state.version;
}

function toast(msg, error) {
  const t = document.getElementById("toast");
  t.textContent = msg;
  t.className = "toast" + (error ? " error" : "");
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, 2500);
}

async function send(path, body) {
  const headers = { "Content-Type": "application/json" };
  const token = localStorage.getItem("shoeToken");
  if (token) headers["X-Shoe-Token"] = token;
  try {
    const r = await fetch(path, { method: "POST", headers, body: JSON.stringify(body) });
    const j = await r.json().catch(() => ({}));
    if (!r.ok) { toast(j.error || ("refused: " + r.status), true); return false; }
    toast("sent: " + (j.posted ? j.posted.action + (j.posted.seat ? " seat " + j.posted.seat : "") : "ok"));
    return true;
  } catch (e) {
    toast("not sent: " + e, true);
    return false;
  }
}

for (const b of document.querySelectorAll(".buttons button")) {
  b.addEventListener("click", async () => {
    const action = b.dataset.action;
    const body = { action, seat: null, args: {} };
    if (b.dataset.needsSeat) {
      if (selected === null) { toast("select a seat first", true); return; }
      body.seat = selected;
      if (state && state.street) body.args.street = state.street;
    }
    if (await send("/input", body) && b.dataset.needsSeat) { selected = null; render(); }
  });
}

function connect() {
  const conn = document.getElementById("conn");
  const es = new EventSource("/events");
  es.addEventListener("open", () => { conn.textContent = "live"; });
  es.addEventListener("state", (ev) => { state = JSON.parse(ev.data); render(); });
  es.addEventListener("error", () => { conn.textContent = "reconnecting"; });
}

renderButtons();
fetch("/state").then((r) => r.json()).then((s) => { if (!state) { state = s; render(); } }).catch(() => {});
connect();
