// shoe-ctl dealer display: renders the public state pushed over /events, posts dealer inputs.
// No libraries, no network beyond this server. Text is set with textContent only.
"use strict";

const LED_NAMES = ["green", "amber", "blue", "white", "red"];
const SUITS = { c: "\u2663", d: "\u2666", h: "\u2665", s: "\u2660" };
const MUCKED = new Set(["folded", "killed", "dead"]);
const GAMES = [["stud", "Stud"], ["stud8", "Stud/8"], ["razz", "Razz"]];
const STREET_WORDS = { "3rd": "3rd street", "4th": "4th street", "5th": "5th street", "6th": "6th street", "7th": "7th street" };
const CARD_SIGNALS = new Set(["deal", "burn", "community"]);
const STREETS = ["3rd", "4th", "5th", "6th", "7th"];
// What the dealer does next where the machine's words do not say it.
const NEXT_STEP = {
  showdown: "Then: pot pushed \u2192 tap Hand complete",
  idle: "Next: load the shuffled deck \u2192 tap New hand",
};
let state = null;
let selected = null;
// Every dealer input's specification (GET /inputs, shoe_ctl/input_spec.py): its seat rule, its
// arguments' allowed values, whether it moves the hand on (held while a STOP is up) and which
// STOPs ask for it.
let INPUTS = {};
let live = false;  // connected to /events: until then no button posts anything
// The page's watchdog: the server sends an event at least every second (a "beat"); after
// NO_SERVICE_MS without one, or a beat saying the controller is stuck, or "bye" (the service
// stops), the whole page says NO SERVICE — DO NOT DEAL (docs/display.md, *No service*).
const NO_SERVICE_MS = 3000;
let lastHeard = 0;
let lost = "NO SERVICE \u2014 DO NOT DEAL";  // until the first event
let lostWhy = "connecting to the service\u2026";

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
    const cell = el("div", "led-cell");
    const d = el("div", "led " + name);
    cell.appendChild(d);
    cell.appendChild(el("div", "led-name", name));
    if (lit.has(name)) {
      d.classList.add("on");
      if (led.mode !== "steady") {
        d.classList.add(led.mode);
        d.style.setProperty("--period", ((led.on_ms + led.off_ms) / 1000 || 1) + "s");
      }
    }
    box.appendChild(cell);
  }
  box.title = led ? led.name + " (" + led.mode + ")" : "off";
  box.dataset.pattern = led ? led.name : "";
}

// The instruction as a short headline read across the table, the machine's full words below it.
function headline(ins) {
  const text = ins.text || "";
  const seat = ins.seat !== null && ins.seat !== undefined ? ins.seat : null;
  const load = text.startsWith("Load the new stub") ? "LOAD STUB, then " : "";
  switch (ins.signal) {
    case "deal": return load + "DEAL " + (ins.face || "").toUpperCase() + " \u2192 seat " + seat;
    case "burn": return load + (text.includes("aside") ? "SET ASIDE one card" : "BURN" + (ins.street ? " " + ins.street : ""));
    case "community": return load + "COMMUNITY \u2192 centre";
    case "scramble": return text.startsWith("Put the premature") ? "RESHUFFLE \u2192 stub" : "SCRAMBLE \u2192 new stub";
    case "cut": return "CUT \u2192 new stub";
    case "betting": return "BETTING" + (seat !== null ? " \u2192 seat " + seat + " first" : "");
    case "showdown": return seat !== null ? "SEAT " + seat + " WINS" : "SHOWDOWN";
    case "stop": return text.startsWith("Sequence gap") ? "STOP \u2014 count the cards"
      : text.startsWith("Stop: card-placement") ? "STOP \u2014 count, then place the cards" : "STOP \u2014 read the alert";
    case "shoe-fault": return text.startsWith("Shoe not connected") ? "SHOE NOT CONNECTED \u2014 check the cable"
      : "SHOE FAULT \u2014 pull no card";
    case "degraded": return "SHOE NOT HEARD \u2014 pull no card";
    case "idle":
      if (text.startsWith("Misdeal")) return "MISDEAL \u2014 collect every card";
      if (text.startsWith("Connecting")) return "CONNECTING TO THE SHOE\u2026";
      if (ins.card_no) return "WAIT \u2014 pull no card yet";
      return "NO HAND \u2014 tap New hand";
    default: return text || ins.signal;
  }
}

// The number of the next card within the current stub (the hand's deck or a scrambled new
// stub), only when the next thing is a card from the shoe.
function cardNumber(ins, s) {
  if (!CARD_SIGNALS.has(ins.signal)) return null;
  if (Number.isInteger(ins.stub_no)) return ins.stub_no;
  if (s && s.stub && Number.isInteger(s.stub.drawn)) return null;  // the matching update is on its way
  return ins.card_no || null;
}

// The headline keeps its words whole: a long one is set smaller until it fits its box (the CSS
// size is the largest; never below 60 % of it).
function fitHeadline() {
  const e = document.getElementById("ins-text");
  const head = document.getElementById("instruction");
  const wrap = e.parentElement;
  e.style.fontSize = "";
  const cs = getComputedStyle(head);
  const room = head.clientHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom);
  const full = parseFloat(getComputedStyle(e).fontSize);
  let size = full;
  while ((e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1 || wrap.offsetHeight > room + 1)
         && size > full * 0.5) {
    size *= 0.93;
    e.style.fontSize = size + "px";
  }
}

// Every seat's cards on one line inside its box: one size for the whole table, the CSS size
// the largest, smaller until the fullest seat fits (never below 40 % of it).
function fitCards() {
  const rows = Array.from(document.querySelectorAll(".seat .cards"));
  for (const r of rows) r.style.fontSize = "";
  if (!rows.length) return;
  const full = parseFloat(getComputedStyle(rows[0]).fontSize);
  const over = () => rows.some((r) => {
    const seat = r.parentElement.getBoundingClientRect(), b = r.getBoundingClientRect();
    return r.scrollWidth > r.clientWidth + 1 || b.bottom > seat.bottom - 2;
  });
  let size = full;
  while (over() && size > full * 0.4) {
    size *= 0.92;
    for (const r of rows) r.style.fontSize = size + "px";
  }
}
window.addEventListener("resize", () => { fitHeadline(); fitCards(); });

function renderInstruction(ins, s) {
  const head = document.getElementById("instruction");
  const text = document.getElementById("ins-text");
  const detail = document.getElementById("ins-detail");
  if (!ins) { text.textContent = "Waiting"; detail.textContent = ""; renderLeds(null); head.dataset.signal = "idle"; return; }
  text.textContent = headline(ins);
  const bits = [];
  if (ins.text && ins.text.toLowerCase() !== text.textContent.toLowerCase()) bits.push(ins.text);
  const next = NEXT_STEP[ins.signal];
  if (next && !(ins.signal === "idle" && (ins.card_no || /^(Misdeal|Connecting)/.test(ins.text || "")))) bits.push(next);
  const n = cardNumber(ins, s);
  if (n) bits.push("card #" + n);
  detail.textContent = bits.join(" \u00b7 ");
  head.dataset.signal = ins.signal;
  head.classList.toggle("attention", !!(ins.led && ins.led.attention));
  renderLeds(ins.led);
  fitHeadline();
}

// Alerts of one code are merged into one band (newest words, "\u00d73"); a latched alert
// (the dealer must stop) is a red band, any other a slim information band.
function mergedAlerts(alerts) {
  const groups = new Map();
  for (const a of alerts || []) {
    const key = a.code + (a.latched ? ":latched" : "");
    const g = groups.get(key);
    const n = Number.isInteger(a.count) && a.count > 1 ? a.count : 1;  // repeats the machine merged
    if (g) { g.ids.push(a.id); g.last = a; g.n += n; } else groups.set(key, { ids: [a.id], last: a, n });
  }
  return Array.from(groups.values());
}

function answeredByButton(code) {
  return Array.from(document.querySelectorAll(".buttons button.hot[data-action]")).some((b) => {
    const spec = INPUTS[b.dataset.action];
    return !b.hidden && spec && spec.asked_by.includes(code);
  });
}

function renderAlerts(alerts) {
  const box = document.getElementById("alerts");
  box.replaceChildren();
  for (const g of mergedAlerts(alerts)) {
    const a = g.last;
    const row = el("div", "alert " + (a.latched ? "latched" : "info"));
    row.dataset.id = a.id;
    row.dataset.code = a.code;
    row.dataset.count = g.n;
    row.appendChild(el("span", "code", a.code));
    if (g.n > 1) row.appendChild(el("span", "count", "\u00d7" + g.n));
    const where = [a.street, a.seat ? "seat " + a.seat : null].filter(Boolean).join(", ");
    const msg = el("span", "msg", a.message + (where && !a.message.startsWith(a.street + " ") ? " (" + where + ")" : ""));
    if (a.moves && a.moves.length) {
      const moves = el("ol", "moves");
      for (const m of a.moves) moves.appendChild(el("li", null, "Move " + m.replace("->", "\u2192")));
      msg.appendChild(moves);
    }
    row.appendChild(msg);
    // a STOP's Acknowledge glows, unless the STOP asks for an input whose own button glows
    // (a sequence gap's Cards found…): one prominent action
    const b = el("button", "ack" + (a.latched && !answeredByButton(a.code) ? " hot" : ""),
      a.latched ? "Acknowledge" : "OK");
    b.disabled = !live;
    // one request for the whole band: the machine clears every alert of the code at once
    b.addEventListener("click", () => send("/ack", { ids: g.ids }));
    row.appendChild(b);
    box.appendChild(row);
  }
}

function renderSeats(s) {
  const box = document.getElementById("table");
  box.replaceChildren();
  const target = s.instruction ? s.instruction.seat : null;
  // NO HAND: the previous hand's cards, marks and statuses are gone; the seats stay for the sheet
  const idle = s.state === "idle";
  box.dataset.idle = idle ? "yes" : "no";
  for (const seat of s.seats || []) {
    if (idle) {
      const d = el("div", "seat empty");
      d.dataset.seat = seat.seat;
      const head = el("div", "head");
      head.appendChild(el("span", "num", seat.seat));
      d.appendChild(head);
      box.appendChild(d);
      continue;
    }
    const d = el("div", "seat " + seat.status);
    d.dataset.seat = seat.seat;
    if (seat.seat === selected) d.classList.add("selected");
    if (seat.seat === target) d.classList.add("target");
    const head = el("div", "head");
    head.appendChild(el("span", "num", seat.seat));
    const tags = el("div", "tags");  // in the head row: never cut off when the boxes are short
    head.appendChild(tags);
    head.appendChild(el("span", "status " + seat.status, seat.status));
    d.appendChild(head);
    const cards = el("div", "cards");
    for (let i = 0; i < (seat.down_count || 0); i++) {
      const shown = seat.down && seat.down[i];
      cards.appendChild(shown ? cardEl(shown, "down") : cardEl(null));
    }
    for (const c of seat.up || []) cards.appendChild(cardEl(c));
    d.appendChild(cards);
    if (seat.bring_in && s.street === "3rd") tags.appendChild(el("span", "bring-in", "BRING-IN"));
    if (seat.first_to_act) tags.appendChild(el("span", "first", "FIRST TO ACT"));
    if (seat.open_pair && s.street === "4th") {
      const tag = el("span", "pair", "OPEN PAIR");
      if (s.open_pair) tag.title = s.open_pair.text;
      tags.appendChild(tag);
    }
    if (seat.absent) tags.appendChild(el("span", "absent", "ABSENT"));
    if (seat.no_bet) tags.appendChild(el("span", "no-bet", "MAY NOT BET"));
    if (seat.absent) d.classList.add("absent");
    d.addEventListener("click", () => { selected = selected === seat.seat ? null : seat.seat; render(); });
    box.appendChild(d);
  }
}

function renderSide(s) {
  const game = (GAMES.find((g) => g[0] === s.game) || [null, s.game])[1];
  const rules = s.rules ? s.rules.toUpperCase() + " rules" : "";
  const where = s.street ? STREET_WORDS[s.street] || s.street
    : (s.state || "").includes("showdown") ? "showdown" : (s.state || "").includes("uncontested") ? "hand won" : "";
  const idle = s.state === "idle";
  const hasHand = s.hand !== null && s.hand !== undefined;
  const last = hasHand ? s.hand : s.last_hand;
  document.getElementById("hand").textContent = hasHand && !idle ? "Hand " + s.hand
    : "No hand" + (last !== null && last !== undefined ? " (last: " + last + ")" : "");
  document.getElementById("game").textContent = [game, rules].filter(Boolean).join(" \u00b7 ");
  document.getElementById("street").textContent = where;
  document.getElementById("street").dataset.street = s.street || "";
  const stub = s.stub;
  const gauge = document.getElementById("gauge");
  const fc = document.getElementById("forecast");
  if (stub && !idle) {
    document.getElementById("stub-count").textContent = stub.count;
    document.getElementById("stub-required").textContent = stub.required;
    const full = Math.max(stub.count, stub.required, 1) * 1.25;
    document.getElementById("gauge-fill").style.width = (100 * stub.count / full) + "%";
    document.getElementById("gauge-mark").style.left = (100 * stub.required / full) + "%";
    // red only while cards are still to come from the stub (not after 7th is dealt, at showdown)
    const toCome = !!s.street && !(s.street === "7th" && sub() === "betting");
    // on the forecast street (or later) the short-stub procedure is under way: the plan covers it
    const handled = !!stub.forecast && STREETS.indexOf(s.street) >= STREETS.indexOf(stub.forecast);
    gauge.classList.toggle("short", toCome && stub.count < stub.required && !handled);
    gauge.classList.toggle("handled", toCome && handled);
    gauge.classList.toggle("done", !toCome);
    fc.hidden = !stub.forecast || !toCome;
    fc.textContent = !stub.forecast ? "" : handled ? "Short-stub procedure: follow the screen"
      : "Short stub expected on " + stub.forecast + " street";
  } else {
    document.getElementById("stub-count").textContent = "–";
    document.getElementById("stub-required").textContent = "–";
    document.getElementById("gauge-fill").style.width = "0";
    gauge.classList.remove("short", "handled", "done");
    fc.hidden = true;
  }
  const com = document.getElementById("community");
  com.replaceChildren();
  com.hidden = !s.community || idle;
  if (s.community && !idle) { com.appendChild(el("span", null, "Community ")); com.appendChild(cardEl(s.community)); }
  // RP-10-F / house 16.8: what an open pair allows, on 4th street only, in the machine's words
  const pair = document.getElementById("open-pair");
  pair.hidden = !s.open_pair || s.street !== "4th" || idle;
  pair.textContent = pair.hidden ? "" : s.open_pair.text;
  document.getElementById("shoe-status").textContent = s.shoe ? s.shoe.status : "–";
  const jc = s.journal_chain;  // the journal's hash-chain head (docs/journal.md, "The hash chain")
  document.getElementById("journal-chain").textContent = jc && jc.seq ? "#" + jc.seq + " " + jc.head : "–";
  document.getElementById("shoe-detail").textContent = s.shoe && s.shoe.detail ? s.shoe.detail : "";
  // shoe link authentication (docs/security.md, "The shoe link"): an unauthenticated bench link is shown
  document.getElementById("shoe-auth").hidden = !(s.shoe && s.shoe.auth === "off");
  // about: the software identity (docs/compliance.md, "Verification on demand")
  const sw = s.software;
  document.getElementById("software").textContent = !sw ? "–"
    : "shoe-ctl " + sw.version + ", manifest " + (sw.manifest ? sw.manifest.slice(0, 16) : "none")
      + ", verified " + sw.verified + (sw.shoe_serial ? "; shoe " + sw.shoe_serial + " firmware " + sw.shoe_firmware : "");
  document.getElementById("software").dataset.verified = sw ? sw.verified : "";
  document.getElementById("unverified").hidden = !(sw && sw.verified === "off");
  // the floor broker takes this table's publications and drops them (docs/floor.md): said here
  const fp = document.getElementById("floor-problem");
  fp.hidden = !s.floor_problem;
  fp.textContent = s.floor_problem ? "FLOOR: " + s.floor_problem : "";
  // the newest deck check, until a hand starts (docs/build-a-shoe.md, "Deck check"): a line a finding
  const dc = document.getElementById("deck-check");
  dc.hidden = !s.deck_check;
  dc.replaceChildren();
  if (s.deck_check) {
    dc.dataset.whole = s.deck_check.whole ? "yes" : "no";
    dc.appendChild(el("b", null, (s.deck_check.whole ? "Deck check: whole" : "Deck check: NOT WHOLE")
      + (s.deck_check.by ? " (by " + s.deck_check.by + ")" : "")));
    for (const line of s.deck_check.lines) dc.appendChild(el("div", null, line));
  }
}

// ------------------------------------------------------------------ what the flow needs now
function sub() {
  const name = state && state.state ? state.state : "";
  return name.split("_").pop();
}

function when(cond) {
  if (!state || !state.state) return cond !== "idle";  // state unknown: offer everything but a new hand
  const name = state.state, s = sub(), signal = state.instruction ? state.instruction.signal : "";
  switch (cond) {
    case "showdown": return name.includes("showdown");
    case "third-betting": return name.endsWith("third_betting");
    case "betting": return s === "betting";
    case "scramble": return s === "scramble" || s === "reshuffle" || signal === "scramble";
    case "cut": return s === "cut";
    case "reload": return s === "reload" || s === "cut";
    case "over": return name.includes("showdown") || name.includes("uncontested");
    case "idle": return name === "idle";
    case "gap": return signal === "stop" && (state.instruction.text || "").startsWith("Sequence gap");
    case "placing": return !!state.placement;
    default: return true;
  }
}

// The STOPs open now: the latched alerts' codes, and the sequence gap while its count is due.
function openStops() {
  const codes = state ? (state.alerts || []).filter((a) => a.latched).map((a) => a.code) : [];
  if (when("gap")) codes.push("sequence-gap");
  return codes;
}

// No hand running (the table idle): an input about a hand is refused by the machine
// (input-wrong-time), so its button is disabled; the specification's needs_hand says which.
function heldForNoHand(action) {
  const spec = INPUTS[action];
  return !!(spec && spec.needs_hand && state && state.state === "idle");
}

// An input the machine refuses in its state now (input-wrong-time: Burn error on 3rd street, Fold
// while a street is dealt): its button is disabled; the specification's states say where it is taken.
// A state the chart does not name is not judged (ack-alert is taken in every state: its states are the chart's).
function heldForState(action) {
  const spec = INPUTS[action], chart = (INPUTS["ack-alert"] || {}).states;
  return !!(spec && spec.states && chart && state && chart.includes(state.state) && !spec.states.includes(state.state));
}

function needsSeat(action) {
  const spec = INPUTS[action];
  return spec ? spec.seat === "required" : false;
}

// The STOP rule (shoe_ctl/input_spec.py stop_refusal): an input that moves the hand on waits
// while a STOP is up, unless the STOP asks for it; the floor's override is on the sheet.
function heldByStop(action, stops) {
  const spec = INPUTS[action];
  if (!spec || !spec.progress || !stops.length) return false;
  return !spec.asked_by.some((code) => stops.includes(code));
}

// A sheet's option is offered only with arguments its input's specification allows.
function argsAllowed(action, args) {
  const spec = INPUTS[action];
  if (!spec) return true;
  return Object.entries(args).every(([name, value]) => {
    const arg = spec.args[name];
    if (!arg || !arg.choices.length) return true;
    const values = Array.isArray(value) ? value : [value];
    return values.every((v) => arg.choices.includes(v));
  });
}

function renderButtons() {
  document.getElementById("selected").textContent = selected === null ? "Tap a seat" : "Seat " + selected;
  document.body.dataset.live = live ? "yes" : "no";
  const stops = openStops();
  document.body.dataset.stop = stops.length ? "yes" : "no";
  for (const b of document.querySelectorAll(".buttons button")) {
    const idle = heldForNoHand(b.dataset.action);
    const wrong = !idle && heldForState(b.dataset.action);
    b.disabled = !live || (needsSeat(b.dataset.action) && selected === null) || idle || wrong;
    b.classList.toggle("no-hand", idle);
    b.classList.toggle("wrong-time", wrong);
  }
  for (const b of document.querySelectorAll(".buttons button[data-when]")) b.hidden = !when(b.dataset.when);
  for (const b of document.querySelectorAll(".buttons button[data-hot]")) b.classList.toggle("hot", when(b.dataset.hot));
  // during a STOP the only prominent action is the one the alert asks for
  for (const b of document.querySelectorAll(".buttons button[data-action]")) {
    const held = heldByStop(b.dataset.action, stops);
    b.classList.toggle("held", held);
    if (held) {
      b.classList.remove("hot");
      b.title = "STOP is up (" + stops.join(", ") + "): acknowledge it first";
      if (!(INPUTS[b.dataset.action] || {}).stop_override) b.disabled = true;
    } else {
      b.title = b.classList.contains("no-hand") ? "No hand is running"
        : b.classList.contains("wrong-time") ? "Not now: " + ((INPUTS[b.dataset.action] || {}).wrong_time || "the table refuses it now")
        : "";
    }
  }
  document.getElementById("btn-fold").textContent = state && when("showdown") && state.state ? "Muck" : "Fold";
  document.getElementById("first-unknown").hidden = !(state && state.first_to_act_unknown);
  // no new hand while the shoe is not connected or not heard (the machine refuses it too)
  const sig = state && state.instruction ? state.instruction.signal : "";
  const nh = document.getElementById("btn-new-hand");
  const connecting = sig === "idle" && (state.instruction.text || "").startsWith("Connecting");
  if (sig === "shoe-fault" || sig === "degraded" || connecting) { nh.disabled = true; nh.classList.remove("hot"); }
  if (lost) for (const b of document.querySelectorAll(".buttons button")) b.disabled = true;  // the red page covers the rest
}

// ------------------------------------------------------------------ no service
function renderService() {
  const box = document.getElementById("no-service");
  document.body.dataset.service = lost ? "lost" : "ok";
  box.hidden = !lost;
  if (lost) {
    document.getElementById("no-service-text").textContent = lost;
    document.getElementById("no-service-why").textContent = lostWhy;
    renderLeds(null);  // the page's LEDs go dark: nothing here says deal
  }
}

function setLost(text, why) {
  const was = lost;
  lost = text;
  lostWhy = why || "";
  if (was !== lost) { renderButtons(); renderService(); if (!lost && state) render(); }
}

function heard(alive) {
  lastHeard = Date.now();
  if (alive === false) setLost("SERVICE STUCK \u2014 DO NOT DEAL", "the service's controller stopped; the floor restarts it");
  else if (lost) setLost(null);
}

setInterval(() => {
  if (!lost && Date.now() - lastHeard > NO_SERVICE_MS) {
    setLost("NO SERVICE \u2014 DO NOT DEAL", "no word from the service for " + Math.round((Date.now() - lastHeard) / 1000)
      + " s; call the floor");
  }
}, 250);

function render() {
  if (!state) return;
  renderInstruction(state.instruction, state);
  renderSeats(state);
  renderSide(state);
  renderButtons();
  renderAlerts(state.alerts);
  fitHeadline();
  fitCards();
  renderReply();
  renderService();
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

// A decision only some roles may make (a latched alert, a misdeal, the floor's override) asks
// for a named user and PIN (docs/compliance.md, "People and roles"); the PIN is sent once with
// that input and kept nowhere.
function askCredential(need, why) {
  const dlg = document.getElementById("cred");
  document.getElementById("cred-why").textContent = why + " (" + need.join(" or ") + ")";
  const user = document.getElementById("cred-user");
  const pin = document.getElementById("cred-pin");
  pin.value = "";
  dlg.hidden = false;
  (user.value ? pin : user).focus();
  return new Promise((resolve) => {
    const done = (ok) => {
      dlg.hidden = true;
      document.getElementById("cred-ok").onclick = null;
      document.getElementById("cred-cancel").onclick = null;
      const out = ok ? { user: user.value.trim(), pin: pin.value } : null;
      pin.value = "";
      resolve(out);
    };
    document.getElementById("cred-ok").onclick = () => done(true);
    document.getElementById("cred-cancel").onclick = () => done(false);
  });
}

async function send(path, body) {
  const headers = { "Content-Type": "application/json" };
  const token = localStorage.getItem("shoeToken");
  if (token) headers["X-Shoe-Token"] = token;
  try {
    const r = await fetch(path, { method: "POST", headers, body: JSON.stringify(body) });
    const j = await r.json().catch(() => ({}));
    if (r.status === 401 && Array.isArray(j.need) && j.need.length) {
      const cred = await askCredential(j.need, j.error || "a named user decides");
      if (cred) return send(path, Object.assign({}, body, { credential: cred }));
    }
    if (!r.ok) {
      showRefused("NOT SENT \u2014 " + (j.error || ("refused: " + r.status)) + "  (tap to close)");
      toast(j.error || ("refused: " + r.status), true);
      return false;
    }
    const label = Array.isArray(j.posted) ? "acknowledged"
      : j.posted ? j.posted.action + (j.posted.seat ? " seat " + j.posted.seat : "") : "ok";
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
    // the cards may stand: house 16.15 on the final downcard; TDA on any street (Rule 38)
    if (seventh || (state && state.rules === "tda")) {
      options.push({ id: "two-stands", label: "Two burns, final card stands", args: { burns: 2, stands: true } });
      options.push({ id: "none-stands", label: "No burn, cards stand", args: { burns: 0, stands: true } });
    }
    return { title: "Burn error on " + ((state && state.street) || "this street"), options };
  },
  stubmixed() {
    // TDA RP-4: the stub was gathered with other cards; every card of the piles named went in
    return { title: "The stub was mixed with which cards? (call the floor)", options: [
      { id: "muck", label: "The muck (folded hands)", args: { piles: ["muck"] } },
      { id: "burns", label: "The burns", args: { piles: ["burns"] } },
      { id: "muck-burns", label: "The muck and the burns", args: { piles: ["muck", "burns"] } },
      { id: "set-aside", label: "The set-aside cards", args: { piles: ["set-aside"] } },
    ] };
  },
  gap() {
    // the places the screen had next, in order: cards pulled during the gap lie there
    const places = state && state.instruction && state.instruction.cards ? state.instruction.cards : [];
    const options = [{ id: "n0", label: "No card missing", args: { cards: 0 } }];
    for (let n = 1; n <= places.length; n++) {
      options.push({ id: "n" + n, label: n + " found: " + places.slice(0, n).join(", "), args: { cards: n } });
    }
    for (let n = 1; n <= 3; n++) {
      options.push({ id: "burned" + n, label: "Floor: " + n + " burned", args: { cards: n, burned: true }, danger: true });
    }
    return { title: "Sequence gap: count the cards on the felt. How many cards are out that the screen does not show? "
      + "(Floor: burned = out of play; or declare the hand dead with Misdeal)", options };
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
  spec.options = spec.options.filter((o) => !o.args || argsAllowed(action, o.args));
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

// ------------------------------------------------------------------ recall (docs/compliance.md, "Recall")
// The last 10 hands from the journal, card by card with times; usable in a STOP and a tilt. The
// downcards come only with a floor supervisor's or surveillance credential, and that view is journaled.
function recallEntry(e) {
  const row = el("div", "recall-entry k-" + e.kind);
  row.appendChild(el("span", "t", e.t));
  if (e.kind === "card") {
    const where = e.role === "up" || e.role === "down" ? "seat " + e.seat + " " + e.role : e.role;
    row.appendChild(el("span", "what", (e.street || "") + " " + where));
    row.appendChild(cardEl(e.card));
  } else if (e.kind === "input") {
    row.appendChild(el("span", "what", e.action + (e.seat ? " seat " + e.seat : "") + (e.by ? "  (" + e.by + ")" : "")
                                       + (e.gate ? "  [" + e.gate + "]" : "")));
  } else {
    row.appendChild(el("span", "what", (e.latched ? "STOP " : "") + e.code + ": " + e.message));
  }
  return row;
}

function renderRecall(data) {
  const body = document.getElementById("recall-body");
  body.replaceChildren();
  document.getElementById("recall-mode").textContent = data.hole_cards
    ? "with hole cards (shown to " + data.by + ", journaled)" : "upcards only";
  if (!data.hands.length) body.appendChild(el("div", "recall-empty", "no hand in the journal yet"));
  for (const h of data.hands.slice().reverse()) {
    const box = el("section", "recall-hand");
    box.appendChild(el("h3", null, "Hand " + h.hand + " \u2014 " + h.game + ", " + h.rules + ", seats "
      + h.seats.join(" ") + ", started " + h.started + (h.finished ? "" : " (in progress)")));
    for (const e of h.entries) box.appendChild(recallEntry(e));
    if (h.more) box.appendChild(el("div", "recall-empty", h.more + " more entries not shown"));
    body.appendChild(box);
  }
}

async function openRecall(credential) {
  const headers = { "Content-Type": "application/json" };
  const token = localStorage.getItem("shoeToken");
  if (token) headers["X-Shoe-Token"] = token;
  const r = credential
    ? await fetch("/recall", { method: "POST", headers, body: JSON.stringify({ credential }) })
    : await fetch("/recall");
  const j = await r.json().catch(() => ({}));
  if (!r.ok) { toast(j.error || ("recall refused: " + r.status), true); return; }
  renderRecall(j);
  // the instruction (a STOP, a tilt) stays in sight above the recall
  const top = document.getElementById("instruction").getBoundingClientRect().bottom;
  document.getElementById("recall").style.setProperty("--recall-top", Math.round(top) + "px");
  document.getElementById("recall").hidden = false;
}

document.getElementById("btn-recall").addEventListener("click", () => openRecall(null));
document.getElementById("recall-close").addEventListener("click", () => {
  document.getElementById("recall").hidden = true;
  document.getElementById("recall-body").replaceChildren();  // hole cards leave the page with it
});
document.getElementById("recall-holes").addEventListener("click", async () => {
  const cred = await askCredential(["floor-supervisor", "surveillance"], "The downcards are shown to");
  if (cred) openRecall(cred);
});

for (const b of document.querySelectorAll(".buttons button")) {
  b.addEventListener("click", async () => {
    const action = b.dataset.action;
    if (!live) { toast("not connected: nothing sent", true); return; }
    if (action === "new-hand") { openNewHandSheet(); return; }
    if (action === "place-cards") { openPlaceSheet(); return; }
    let seat = null;
    const args = {};
    if (needsSeat(action)) {
      if (selected === null) { toast("select a seat first", true); return; }
      seat = selected;
      if (state && state.street) args.street = state.street;
    }
    if (b.dataset.sheet) { openSheet(b.dataset.sheet, action, seat); return; }
    await sendInput(action, seat, args);
  });
}

// ------------------------------------------------------------------ new hand
// Seats dealt in (default: the previous hand's, else every table seat), game and rules
// (default: the service's, i.e. the previous hand's); one tap on "Deal" posts new-hand.
function openNewHandSheet() {
  const n = (state && state.table_seats) || 8;
  const dealt = state && ((state.hand !== null && state.hand !== undefined)
    || (state.last_hand !== null && state.last_hand !== undefined));
  const prev = dealt ? (state.seats || []).map((x) => x.seat) : [];
  const seats = new Set(prev.length >= 2 ? prev : Array.from({ length: n }, (_, i) => i + 1));
  let game = (state && state.game) || "stud";
  let rules = (state && state.rules) || "tda";
  const ruleNames = ["tda", "house"];
  if (!ruleNames.includes(rules)) ruleNames.push(rules);
  const sheet = document.getElementById("sheet");
  sheet.dataset.sheet = "new-hand";
  document.getElementById("sheet-title").textContent = "New hand: seats dealt in, game, rules";
  const box = document.getElementById("sheet-options");
  box.replaceChildren();
  const deal = el("button", "option go", "");
  deal.dataset.option = "deal";
  const refresh = () => {
    for (const b of box.querySelectorAll("button[data-seat]")) b.classList.toggle("on", seats.has(Number(b.dataset.seat)));
    for (const b of box.querySelectorAll("button[data-game]")) b.classList.toggle("on", b.dataset.game === game);
    for (const b of box.querySelectorAll("button[data-rules]")) b.classList.toggle("on", b.dataset.rules === rules);
    const list = Array.from(seats).sort((a, b2) => a - b2);
    deal.textContent = list.length >= 2 ? "Deal seats " + list.join(", ") : "Tap at least 2 seats";
    deal.disabled = list.length < 2 || (stops.length > 0 && !override);
  };
  const row = (cls) => { const r = el("div", "sheet-row " + cls); box.appendChild(r); return r; };
  const seatRow = row("seats");
  for (let i = 1; i <= n; i++) {
    const b = el("button", "option small", String(i));
    b.dataset.seat = i;
    b.dataset.option = "seat-" + i;
    b.addEventListener("click", () => { if (seats.has(i)) seats.delete(i); else seats.add(i); refresh(); });
    seatRow.appendChild(b);
  }
  const gameRow = row("games");
  for (const [value, label] of GAMES) {
    const b = el("button", "option small", label);
    b.dataset.game = value;
    b.dataset.option = "game-" + value;
    b.addEventListener("click", () => { game = value; refresh(); });
    gameRow.appendChild(b);
  }
  for (const value of ruleNames) {
    const b = el("button", "option small", value.toUpperCase() + " rules");
    b.dataset.rules = value;
    b.dataset.option = "rules-" + value;
    b.addEventListener("click", () => { rules = value; refresh(); });
    gameRow.appendChild(b);
  }
  // a latched STOP blocks a new hand: the floor may override it (journaled), never a stray tap
  const stops = state ? (state.alerts || []).filter((a) => a.latched).map((a) => a.code) : [];
  let override = false;
  deal.addEventListener("click", async () => {
    const list = Array.from(seats).sort((a, b2) => a - b2);
    if (list.length < 2 || (stops.length && !override)) return;
    closeSheet();
    const args = { seats: list, game, rules };
    if (override) args.override = true;
    await sendInput("new-hand", null, args);
  });
  if (stops.length) {
    const warn = row("stop-warning");
    warn.appendChild(el("div", "sheet-warning", "STOP is up (" + Array.from(new Set(stops)).join(", ")
      + "): acknowledge it first. Only the floor may override."));
    const ov = el("button", "option danger small", "Floor override: deal anyway");
    ov.dataset.option = "override";
    ov.addEventListener("click", () => { override = !override; ov.classList.toggle("on", override); refresh(); });
    warn.appendChild(ov);
  }
  row("deal").appendChild(deal);
  refresh();
  sheet.hidden = false;
}

// ------------------------------------------------------------------ placing a street's cards
// docs/irregularities.md, *Placing a street's cards*: one line per read of the street, in the
// order pulled (an upcard by name, a downcard by its number only); the dealer taps where each
// lies and its face; "Place" posts place-cards once every line has a place.
function openPlaceSheet() {
  const pl = state && state.placement;
  if (!pl) return;
  const sheet = document.getElementById("sheet");
  sheet.dataset.sheet = "place";
  const counted = Object.entries(pl.counted || {}).map(([s, n]) => "seat " + s + ": " + n).join(", ");
  document.getElementById("sheet-title").textContent = "Place each card of " + pl.street + " street, in the order "
    + "pulled: tap where it lies" + (counted ? " (counted " + counted + ")" : "");
  const box = document.getElementById("sheet-options");
  box.replaceChildren();
  const where = pl.reads.map(() => null);
  const faces = pl.reads.map((r) => r.face);
  const go = el("button", "option go", "");
  go.dataset.option = "place";
  const spots = ["burn", "muck", "off"].concat(pl.community ? ["centre"] : []);
  const words = { burn: "Burn", muck: "Muck", off: "Off table", centre: "Centre" };
  const refresh = () => {
    pl.reads.forEach((r, k) => {
      const row = box.querySelector('[data-read="' + k + '"]');
      for (const b of row.querySelectorAll("button[data-to]")) b.classList.toggle("on", b.dataset.to === where[k]);
      const f = row.querySelector("button[data-face]");
      f.textContent = faces[k] === "up" ? "Face up" : "Face down";
      f.classList.toggle("on", faces[k] === "up");
      f.disabled = !(where[k] || "").startsWith("seat");
    });
    const left = where.filter((w) => w === null).length;
    go.textContent = left ? left + " card(s) still to place" : "Place the " + where.length + " cards";
    go.disabled = left > 0;
  };
  pl.reads.forEach((r, k) => {
    const row = el("div", "sheet-row place-row");
    row.dataset.read = k;
    const label = el("div", "place-label");
    label.appendChild(el("span", null, "#" + r.n + " "));
    if (r.card) label.appendChild(cardEl(r.card)); else label.appendChild(el("span", "place-face", "down"));
    row.appendChild(label);
    const pick = (to) => { where[k] = to; refresh(); };
    for (const seat of pl.seats) {
      const b = el("button", "option small", String(seat));
      b.dataset.to = "seat " + seat;
      b.dataset.option = "read-" + k + "-seat-" + seat;
      b.addEventListener("click", () => pick("seat " + seat));
      row.appendChild(b);
    }
    for (const spot of spots) {
      const b = el("button", "option small spot", words[spot]);
      b.dataset.to = spot;
      b.dataset.option = "read-" + k + "-" + spot;
      b.addEventListener("click", () => pick(spot));
      row.appendChild(b);
    }
    const f = el("button", "option small face", "");
    f.dataset.face = "yes";
    f.dataset.option = "read-" + k + "-face";
    f.addEventListener("click", () => { faces[k] = faces[k] === "up" ? "down" : "up"; refresh(); });
    row.appendChild(f);
    box.appendChild(row);
  });
  go.addEventListener("click", async () => {
    if (where.some((w) => w === null)) return;
    const places = where.map((w, k) => (w.startsWith("seat") ? w + " " + faces[k] : w));
    closeSheet();
    await sendInput("place-cards", null, { places });
  });
  const foot = el("div", "sheet-row");
  foot.appendChild(go);
  box.appendChild(foot);
  refresh();
  sheet.hidden = false;
}

function connect() {
  const conn = document.getElementById("conn");
  const es = new EventSource("/events");
  es.addEventListener("open", () => { live = true; conn.textContent = "live"; heard(); renderButtons(); if (state) render(); });
  es.addEventListener("state", (ev) => { state = JSON.parse(ev.data); heard(); render(); });
  es.addEventListener("beat", (ev) => { let b = {}; try { b = JSON.parse(ev.data); } catch (e) { b = {}; } heard(b.alive); });
  es.addEventListener("bye", () => {
    lastHeard = 0;
    setLost("SERVICE STOPPED \u2014 DO NOT DEAL", "the service was stopped; deal only when this screen shows an instruction again");
  });
  es.addEventListener("error", () => { live = false; conn.textContent = "reconnecting"; renderButtons(); if (state) render(); });
}

// A page load while the service is down then shows the no-service page, not the browser's error
// (sw.js; service workers run on 127.0.0.1, the kiosk's address, not on a plain-http tablet).
if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js").catch(() => {});
fetch("/inputs").then((r) => r.json()).then((spec) => { INPUTS = spec; if (state) render(); else renderButtons(); })
  .catch(() => {});
renderButtons();
renderService();
fetch("/state").then((r) => r.json()).then((s) => { if (!state) { state = s; render(); } }).catch(() => {});
connect();
