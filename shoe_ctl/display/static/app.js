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
  if (ins.card_no) bits.push("card #" + ins.card_no);
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
    const msg = el("span", "msg", a.message + (where ? " (" + where + ")" : ""));
    if (a.moves && a.moves.length) {
      const moves = el("ol", "moves");
      for (const m of a.moves) moves.appendChild(el("li", null, "Move " + m.replace("->", "\u2192")));
      msg.appendChild(moves);
    }
    row.appendChild(msg);
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
    if (seat.absent) tags.appendChild(el("span", "absent", "ABSENT"));
    if (seat.no_bet) tags.appendChild(el("span", "no-bet", "MAY NOT BET"));
    if (seat.absent) d.classList.add("absent");
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

// ------------------------------------------------------------------ what the flow needs now
function sub() {
  const name = state && state.state ? state.state : "";
  return name.split("_").pop();
}

function when(cond) {
  if (!state || !state.state) return true;  // state unknown: offer everything
  const name = state.state, s = sub(), signal = state.instruction ? state.instruction.signal : "";
  switch (cond) {
    case "showdown": return name.includes("showdown");
    case "third-betting": return name.endsWith("third_betting");
    case "betting": return s === "betting";
    case "scramble": return s === "scramble" || s === "reshuffle" || signal === "scramble";
    case "cut": return s === "cut";
    case "reload": return s === "reload" || s === "cut";
    case "over": return name.includes("showdown") || name.includes("uncontested");
    default: return true;
  }
}

function renderButtons() {
  document.getElementById("selected").textContent = selected === null ? "none" : selected;
  for (const b of document.querySelectorAll(".buttons button[data-needs-seat]")) b.disabled = selected === null;
  for (const b of document.querySelectorAll(".buttons button[data-when]")) b.hidden = !when(b.dataset.when);
  for (const b of document.querySelectorAll(".buttons button[data-hot]")) b.classList.toggle("hot", when(b.dataset.hot));
  document.getElementById("btn-fold").textContent = state && when("showdown") && state.state ? "Muck" : "Fold";
  document.getElementById("first-unknown").hidden = !(state && state.first_to_act_unknown);
}

function render() {
  if (!state) return;
  renderInstruction(state.instruction);
  renderAlerts(state.alerts);
  renderSeats(state);
  renderSide(state);
  renderButtons();
  renderReply();
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

// ------------------------------------------------------------------ the machine's answer
let pendingRef = null;
let pendingLabel = "";

function showRefused(text) {
  const r = document.getElementById("refused");
  r.textContent = text;
  r.hidden = false;
}

function renderReply() {
  const reply = state.reply;
  if (pendingRef === null || !reply || reply.ref !== pendingRef) return;
  pendingRef = null;
  document.body.dataset.reply = (reply.refused ? "refused:" : "accepted:") + reply.ref;
  if (reply.refused) {
    const why = (reply.alerts || []).map((a) => a.message).join("; ");
    showRefused("REFUSED \u2014 " + pendingLabel + ": " + (why || "the machine did not accept it") + "  (tap to close)");
  } else {
    document.getElementById("refused").hidden = true;
    toast("done: " + pendingLabel);
  }
}

document.getElementById("refused").addEventListener("click", (ev) => { ev.currentTarget.hidden = true; });

async function send(path, body) {
  const headers = { "Content-Type": "application/json" };
  const token = localStorage.getItem("shoeToken");
  if (token) headers["X-Shoe-Token"] = token;
  try {
    const r = await fetch(path, { method: "POST", headers, body: JSON.stringify(body) });
    const j = await r.json().catch(() => ({}));
    if (!r.ok) {
      showRefused("NOT SENT \u2014 " + (j.error || ("refused: " + r.status)) + "  (tap to close)");
      toast(j.error || ("refused: " + r.status), true);
      return false;
    }
    const label = j.posted ? j.posted.action + (j.posted.seat ? " seat " + j.posted.seat : "") : "ok";
    if (j.ref !== undefined) { pendingRef = j.ref; pendingLabel = label; }
    document.getElementById("refused").hidden = true;
    toast("sent: " + label);
    if (state) renderReply();
    return true;
  } catch (e) {
    toast("not sent: " + e, true);
    return false;
  }
}

async function sendInput(action, seat, args) {
  const body = { action, seat, args: Object.assign({}, args) };
  const ok = await send("/input", body);
  if (ok && seat !== null) { selected = null; render(); }
  return ok;
}

// ------------------------------------------------------------------ choice sheets
// Each sheet: a title and big options; one tap on an option posts the input.
function seatList() {
  return state ? (state.seats || []).filter((s) => !MUCKED.has(s.status)).map((s) => s.seat) : [];
}

const SHEETS = {
  exposed(seat) {
    const street = state && state.street;
    const all = [
      { id: "first", label: "1st hole card", args: { street: "3rd", which: 0 }, on: "3rd" },
      { id: "second", label: "2nd hole card", args: { street: "3rd", which: 1 }, on: "3rd" },
      { id: "both", label: "Both hole cards", args: { street: "3rd", both: true }, on: "3rd" },
      { id: "seventh", label: "7th-street card", args: { street: "7th" }, on: "7th" },
    ];
    const here = all.filter((o) => o.on === street);
    return { title: "Seat " + seat + ": which card was exposed?", options: here.length ? here : all };
  },
  absent(seat) {
    return { title: "Seat " + seat + ": player absent. Has the action reached the seat?", options: [
      { id: "reached", label: "Action reached the seat", args: { action_reached: true } },
      { id: "not-reached", label: "Not yet (dealing)", args: { action_reached: false } },
    ] };
  },
  offtable(seat) {
    if (state && state.street === "3rd") {
      return { title: "Seat " + seat + ": which card went off the table?", options: [
        { id: "up", label: "Door card (up)", args: { face: "up" } },
        { id: "down", label: "Hole card (down)", args: { face: "down" } },
      ] };
    }
    return { title: "Seat " + seat + ": the card of this street went off the table", options: [
      { id: "card", label: "Report card off table", args: {} },
    ] };
  },
  bringin(seat) {
    return { title: "Seat " + seat + " was wrongly named bring-in and bet. Has the next player acted?", options: [
      { id: "acted", label: "Next player acted", args: { next_acted: true } },
      { id: "not-acted", label: "Not yet", args: { next_acted: false } },
    ] };
  },
  count(seat) {
    const options = [];
    for (let n = 0; n <= 9; n++) options.push({ id: "n" + n, label: String(n), args: { cards: n }, small: true });
    return { title: "Seat " + seat + ": how many cards in the hand?", options };
  },
  premature() {
    const options = seatList().map((s) => ({ id: "merge-" + s, label: "Seat " + s + " merged", toggle: s }));
    options.push({ id: "send", label: "Premature cards done", args: {}, merged: true });
    return { title: "Premature cards: tap the seats whose final downcard merged with the hole cards (if any)", options };
  },
  burn() {
    const seventh = state && state.street === "7th";
    const options = [
      { id: "two", label: "Two burns", args: { burns: 2 } },
      { id: "none", label: "No burn", args: { burns: 0 } },
    ];
    if (seventh) {
      options.push({ id: "two-stands", label: "Two burns, final card stands", args: { burns: 2, stands: true } });
      options.push({ id: "none-stands", label: "No burn, cards stand", args: { burns: 0, stands: true } });
    }
    return { title: "Burn error on " + ((state && state.street) || "this street"), options };
  },
  misdeal() {
    return { title: "Declare a MISDEAL? The hand ends and every card goes back.", options: [
      { id: "confirm", label: "Yes: misdeal", args: { confirm: true }, danger: true },
    ] };
  },
};

function closeSheet() {
  document.getElementById("sheet").hidden = true;
  document.getElementById("sheet-options").replaceChildren();
}

function openSheet(name, action, seat) {
  const spec = SHEETS[name](seat);
  const sheet = document.getElementById("sheet");
  sheet.dataset.sheet = name;
  document.getElementById("sheet-title").textContent = spec.title;
  const box = document.getElementById("sheet-options");
  box.replaceChildren();
  const merged = new Set();
  for (const o of spec.options) {
    const b = el("button", "option" + (o.danger ? " danger" : "") + (o.small ? " small" : ""), o.label);
    b.dataset.option = o.id;
    b.addEventListener("click", async () => {
      if (o.toggle !== undefined) {
        if (merged.has(o.toggle)) merged.delete(o.toggle); else merged.add(o.toggle);
        b.classList.toggle("on", merged.has(o.toggle));
        return;
      }
      const args = Object.assign({}, o.args);
      if (o.merged) args.merged = Array.from(merged).sort((a, b2) => a - b2);
      closeSheet();
      await sendInput(action, seat, args);
    });
    box.appendChild(b);
  }
  sheet.hidden = false;
}

document.getElementById("sheet-cancel").addEventListener("click", closeSheet);

for (const b of document.querySelectorAll(".buttons button")) {
  b.addEventListener("click", async () => {
    const action = b.dataset.action;
    let seat = null;
    const args = {};
    if (b.dataset.needsSeat) {
      if (selected === null) { toast("select a seat first", true); return; }
      seat = selected;
      if (state && state.street) args.street = state.street;
    }
    if (b.dataset.sheet) { openSheet(b.dataset.sheet, action, seat); return; }
    await sendInput(action, seat, args);
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
