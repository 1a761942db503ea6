"""The floor page itself (HTML, CSS and script, no file of its own to serve): the room map.

Tiles by pit in their places (``GET /layout``), updated from ``GET /tiles?since=V`` once a second,
only the tiles that changed; a table's detail (``GET /table``) with its alerts, routine notices,
acknowledgements and last hands (``GET /recall``); sign-in (``POST /signin``) and
acknowledgements (``POST /ack``) by a named floor supervisor. ``docs/floor.md``, "The room map".
Every text from a table is set as text, never as markup.
"""

from __future__ import annotations

__all__ = ["PAGE_HTML"]

PAGE_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Floor</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
:root{--tw:9.6em;--th:6.3em}
*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:0;background:#0e0f12;color:#eee;font-size:14px}
header{position:sticky;top:0;z-index:20;display:flex;flex-wrap:wrap;gap:.4em 1.2em;align-items:center;
  padding:.45em .8em;background:#1c1e24;border-bottom:1px solid #333}
header h1{font-size:1.15em;margin:0;white-space:nowrap}
#conn{white-space:nowrap}#conn.down{color:#ff6b6b;font-weight:bold}
.count{white-space:nowrap}
.badge{display:inline-block;min-width:1.6em;text-align:center;padding:.05em .4em;border-radius:.3em;font-weight:bold}
#crit{background:#3a1116;color:#ffb3bb}#crit.on{background:#d0021b;color:#fff;animation:flash 1s steps(2,start) infinite}
#warn{background:#3b3210;color:#ffd666}
.legend{display:flex;flex-wrap:wrap;gap:.3em .7em}
.legend span{white-space:nowrap}
.sw{display:inline-block;width:.85em;height:.85em;border-radius:.15em;vertical-align:-.1em;margin-right:.2em}
#signin{margin-left:auto;white-space:nowrap}
#signin input{width:7em}
button{font:inherit;cursor:pointer}
main{padding:.6em .8em 3em}
.pit{display:inline-block;vertical-align:top;margin:0 1.2em 1em 0;content-visibility:auto}
.pit h2{font-size:.95em;margin:.2em 0 .3em;color:#aab}
.grid{display:grid;gap:.3em;grid-auto-columns:var(--tw);grid-auto-rows:var(--th)}
.grid.free{grid-template-columns:repeat(auto-fill,var(--tw));margin-bottom:.3em;content-visibility:auto;
  contain-intrinsic-block-size:auto 36em}
#free h2{font-size:.95em;margin:.2em 0 .3em;color:#aab}
.tile{position:relative;overflow:hidden;border-radius:.35em;padding:.2em .4em;border:2px solid transparent;
  cursor:pointer;line-height:1.22;font-size:.82em;background:#26282e;color:#eee}
.t1{display:flex;gap:.3em;align-items:baseline}
.hn{flex:none;color:#c8cbd6;font-size:.9em}
.tile:focus{outline:2px solid #fff}
.tn{flex:1 1 auto;min-width:0;font-weight:bold;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;font-size:1.1em}
.th.short{color:#ff8a8a;font-weight:bold}
.tw,.th,.tr{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.th,.tr{color:#ccd;font-size:.92em}
.tr{color:#9ab}
.ta{margin:0;padding:0;list-style:none}
.ta li{display:-webkit-box;-webkit-line-clamp:2;-webkit-box-orient:vertical;overflow:hidden;font-size:.92em;
  font-weight:bold;overflow-wrap:anywhere}
.ta li.critical{color:#fff;background:#d0021b;border-radius:.2em;padding:0 .2em}
.ta li.warning{color:#ffd666}
.s-dealing{background:#17532a}.s-betting{background:#173d6b}.s-showdown{background:#45306b}
.s-idle{background:#26282e;color:#bbb}
.s-stop{background:#8e0f1f;border-color:#ff4d5e}
.s-tilt{background:repeating-linear-gradient(135deg,#7a2a00 0 .6em,#a83d00 .6em 1.2em);border-color:#ff9a3d}
.s-silent{background:#4a3b08;border:2px dashed #ffd23d}
.s-offline{background:#141518;color:#888;border:2px dashed #555}
.s-none{background:#141518;color:#666;border:1px dotted #444}
.flash{animation:flash 1s steps(2,start) infinite}
@keyframes flash{50%{filter:brightness(1.7)}}
@media (prefers-reduced-motion:reduce){.flash,#crit.on{animation:none;outline:3px solid #fff}}
#detail{position:fixed;top:0;right:0;bottom:0;width:min(30em,100%);z-index:10;background:#17181d;
  border-left:2px solid #fb0;overflow:auto;padding:.8em 1em}
#detail[hidden]{display:none}
#detail h2{margin:.1em 0 .3em;font-size:1.25em;word-break:break-all}
#detail h3{font-size:1em;margin:1em 0 .3em;color:#fb0}
.al{margin:.3em 0;padding:.3em .4em;border-radius:.3em;background:#23252b}
.al.critical{border-left:.4em solid #ff4d5e}.al.warning{border-left:.4em solid #ffd666}.al.info{border-left:.4em solid #678}
.al .meta{color:#aab;font-size:.9em}
.rc{font-family:ui-monospace,monospace;font-size:.85em;white-space:pre-wrap}
.muted{color:#889}
</style></head>
<body>
<header>
<h1>Floor <span id="room"></span></h1>
<span id="conn">connecting...</span>
<span class="count" title="open critical alerts: the floor must come">critical <span class="badge" id="crit">0</span></span>
<span class="count" title="open alerts a supervisor decides or signs for">needs the floor <span class="badge" id="warn">0</span></span>
<span class="legend" id="legend"></span>
<span id="signin"><span id="who"></span>
<span id="signin-form"><input id="signin-user" placeholder="user" autocomplete="username" autocapitalize="off">
<input id="signin-pin" type="password" inputmode="numeric" placeholder="PIN" autocomplete="off">
<button id="signin-go">Sign in</button></span>
<button id="signout" hidden>Sign out</button></span>
</header>
<main id="room-map"></main>
<aside id="detail" hidden></aside>
<script>
"use strict";
const STATUSES = [["dealing", "dealing", "#17532a"], ["betting", "betting", "#173d6b"], ["showdown", "showdown", "#45306b"],
  ["idle", "between hands", "#26282e"], ["stop", "STOP", "#8e0f1f"], ["tilt", "tilt", "#a83d00"],
  ["silent", "silent", "#4a3b08"], ["offline", "offline", "#141518"]];
const token = (location.hash.match(/token=([^&]+)/) || [])[1];
if (token) { sessionStorage.setItem("floorToken", token); history.replaceState(null, "", location.pathname); }
const tiles = new Map();  // table -> {el, parts, t (its last tile), status}
const withAlerts = new Set();
let version = 0, skew = 0, opened = null, layoutDone = false, recallBox = null;
const stats = {applies: 0, tiles: 0, lastMs: 0, maxMs: 0, lastCount: 0};
window.floorStats = stats;
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) e.append(k && k.nodeType ? k : document.createTextNode(k == null ? "" : String(k)));
  return e;
}
function headers() {
  const h = {"Content-Type": "application/json"};
  const t = sessionStorage.getItem("floorToken"); if (t) h["X-Floor-Token"] = t;
  const s = sessionStorage.getItem("floorSession"); if (s) h["X-Floor-Session"] = s;
  return h;
}
function age(us) {
  if (us == null) return "";
  const s = Math.max(0, Math.round((Date.now() * 1000 + skew - us) / 1e6));
  return s < 60 ? s + "s" : s < 3600 ? Math.floor(s / 60) + "m" : Math.floor(s / 3600) + "h" + String(Math.floor(s % 3600 / 60)).padStart(2, "0");
}
function legend() {
  const counts = {}; for (const [k] of STATUSES) counts[k] = 0;
  for (const x of tiles.values()) if (x.status in counts) counts[x.status]++;
  const lg = document.getElementById("legend");
  lg.replaceChildren(...STATUSES.map(([k, words, colour]) => el("span", {"data-count": k},
    el("span", {class: "sw", style: "background:" + colour}), words + " " + counts[k])));
}
function newTile(name) {
  const parts = {n: el("span", {class: "tn", title: name}, name), hn: el("span", {class: "hn"}),
    w: el("div", {class: "tw"}), h: el("div", {class: "th"}), a: el("ul", {class: "ta"}), r: el("div", {class: "tr"})};
  const e = el("div", {class: "tile s-none", "data-table": name, tabindex: "0", role: "button"},
    el("div", {class: "t1"}, parts.n, parts.hn), parts.w, parts.h, parts.a, parts.r);
  parts.w.textContent = "no word yet";
  e.onclick = () => openDetail(name);
  e.onkeydown = (ev) => { if (ev.key === "Enter") openDetail(name); };
  const x = {el: e, parts, t: null, status: "none"};
  tiles.set(name, x);
  return x;
}
const byName = new Intl.Collator("en", {numeric: true});  // table-2 before table-10
const FREE_BLOCK = 60;  // tiles per block: a block off screen is neither laid out nor painted
function placeFree(els) {
  let sec = document.getElementById("free");
  if (!sec) {
    sec = el("section", {id: "free"}, el("h2", {}, "Tables in no pit"));
    document.getElementById("room-map").append(sec);
  }
  // the new tables among the others, by name, in one change of the page
  const all = [...sec.querySelectorAll(".tile"), ...els].sort((a, b) => byName.compare(a.dataset.table, b.dataset.table));
  const blocks = [];
  for (let i = 0; i < all.length; i += FREE_BLOCK) {
    const grid = el("div", {class: "grid free"});
    grid.append(...all.slice(i, i + FREE_BLOCK));
    blocks.push(grid);
  }
  sec.replaceChildren(sec.firstChild, ...blocks);
}
function alertLine(a) {
  const n = a.count > 1 ? " \\u00d7" + a.count : "";
  return (a.latched ? "STOP " : "") + a.code + n + " \\u00b7 " + (a.hand != null ? "#" + a.hand + " " : "") + age(a.time_us);
}
function apply(x, t) {
  x.t = t;
  const p = x.parts, crit = t.open.critical > 0;
  x.status = t.status;
  x.el.className = "tile s-" + t.status + (crit ? " flash" : "");
  p.w.textContent = t.online ? (t.words || "no state yet") : "OFFLINE" + (t.words ? " (last: " + t.words + ")" : "");
  p.hn.textContent = t.hand != null ? "#" + t.hand : "";
  p.hn.title = t.hand != null ? "hand " + t.hand : "";
  p.h.textContent = t.stub && t.stub.count != null ? "stub " + t.stub.count + " / " + t.stub.required : "";
  p.h.className = "th" + (t.stub && t.stub.short ? " short" : "");
  const shown = t.alerts.slice(0, 1).map((a) => el("li", {class: a.severity, "data-alert": t.table + ":" + a.id,
    title: a.code + ": " + (a.message || "")}, alertLine(a)));
  const more = t.open.critical + t.open.warning - shown.length;
  if (more > 0) p.h.textContent += (p.h.textContent ? " \\u00b7 " : "") + "+" + more + " alert" + (more > 1 ? "s" : "");
  p.a.replaceChildren(...shown);
  p.r.textContent = t.notice ? t.notice.code + (t.notice.hand != null ? " #" + t.notice.hand : "") : "";
  p.r.title = t.notice ? (t.notice.message || "") : "";
  if (t.alerts.length) withAlerts.add(t.table); else withAlerts.delete(t.table);
}
function reage() {
  for (const name of withAlerts) {
    const x = tiles.get(name); if (!x || !x.t) continue;
    const lis = x.parts.a.children;
    x.t.alerts.slice(0, 1).forEach((a, i) => { if (lis[i]) lis[i].textContent = alertLine(a); });
  }
}
async function loadLayout() {
  const r = await fetch("/layout", {cache: "no-store"});
  const j = await r.json();
  const map = document.getElementById("room-map");
  for (const pit of j.pits) {
    const grid = el("div", {class: "grid", style: "grid-template-columns:repeat(" + pit.columns + ",var(--tw))"});
    for (const [name, [row, col]] of Object.entries(pit.places)) {
      const x = newTile(name);
      x.el.style.gridRow = row; x.el.style.gridColumn = col;
      grid.append(x.el);
    }
    const sec = el("section", {class: "pit", "data-pit": pit.name}, el("h2", {}, pit.name), grid);
    const em = parseFloat(getComputedStyle(document.body).fontSize) || 14;  // a pit off screen is not drawn:
    sec.style.containIntrinsicSize = "auto " + Math.round(pit.columns * 9.9 * em) + "px auto "  // its size meanwhile
      + Math.round(pit.rows * 6.6 * em + 2.2 * em) + "px";
    map.append(sec);
  }
  layoutDone = true;
}
function update(u) {
  const t0 = performance.now();
  skew = u.now_us - Date.now() * 1000;
  document.getElementById("room").textContent = u.room;
  const c = document.getElementById("conn");
  c.textContent = u.connected ? "broker connected" : "broker DISCONNECTED"; c.className = u.connected ? "" : "down";
  const crit = document.getElementById("crit");
  crit.textContent = u.alerts.critical; crit.className = "badge" + (u.alerts.critical > 0 ? " on" : "");
  document.getElementById("warn").textContent = u.alerts.warning;
  const fresh = [];
  for (const t of u.tiles) {
    let x = tiles.get(t.table);
    if (!x) { x = newTile(t.table); fresh.push(x.el); }
    apply(x, t);
  }
  if (fresh.length) placeFree(fresh);
  reage();
  if (u.tiles.length) legend();
  version = u.version;
  if (opened && u.tiles.some((t) => t.table === opened)) openDetail(opened, true);
  const ms = performance.now() - t0;
  stats.applies++; stats.tiles += u.tiles.length; stats.lastMs = ms; stats.lastCount = u.tiles.length;
  stats.maxMs = Math.max(stats.maxMs, ms); stats.version = version;
}
let busy = false;
async function poll() {
  if (busy) return;
  busy = true;
  try {
    if (!layoutDone) await loadLayout();
    const r = await fetch("/tiles?since=" + version, {cache: "no-store"});
    update(await r.json());
  } catch (e) {
    const c = document.getElementById("conn"); c.textContent = "page offline"; c.className = "down";
  } finally { busy = false; }
}
window.floorApply = update;  // the page's own update path, for a measurement of a burst
function signedIn() { return sessionStorage.getItem("floorUser"); }
function showSignin() {
  const who = signedIn();
  document.getElementById("who").textContent = who ? "signed in: " + who : "";
  document.getElementById("signin-form").hidden = !!who;
  document.getElementById("signout").hidden = !who;
}
document.getElementById("signin-go").onclick = async () => {
  const user = document.getElementById("signin-user").value.trim(), pinBox = document.getElementById("signin-pin");
  const pin = pinBox.value; pinBox.value = "";
  if (!user || !pin) { alert("User and PIN first"); return; }
  const r = await fetch("/signin", {method: "POST", headers: headers(), body: JSON.stringify({user, pin})});
  const j = await r.json().catch(() => ({}));
  if (!r.ok) { alert(j.error || ("refused: " + r.status)); return; }
  sessionStorage.setItem("floorSession", j.session); sessionStorage.setItem("floorUser", j.user);
  showSignin(); if (opened) openDetail(opened, true);
};
function signOutHere() {
  sessionStorage.removeItem("floorSession"); sessionStorage.removeItem("floorUser"); showSignin();
  if (opened) openDetail(opened, true);
}
document.getElementById("signout").onclick = async () => {
  await fetch("/signout", {method: "POST", headers: headers(), body: "{}"}).catch(() => null);
  signOutHere();
};
async function ack(table, id) {
  const body = id === "all" ? {table, all: true} : {table, id};
  const r = await fetch("/ack", {method: "POST", headers: headers(), body: JSON.stringify(body)});
  if (r.status === 401) signOutHere();
  if (!r.ok) { const j = await r.json().catch(() => ({})); alert(j.error || ("refused: " + r.status)); }
  poll();
}
function alertBox(table, a, acking) {
  const box = el("div", {class: "al " + a.severity, "data-detail-alert": table + ":" + a.id},
    el("b", {}, (a.latched ? "STOP " : "") + a.code), a.count > 1 ? " \\u00d7" + a.count : "", " ",
    el("span", {class: "meta"}, a.severity + (a.hand != null ? " \\u00b7 hand " + a.hand : "") + (a.street ? " \\u00b7 " + a.street : "")
      + (a.seat != null ? " \\u00b7 seat " + a.seat : "") + " \\u00b7 " + age(a.time_us) + " ago"),
    el("div", {}, a.message || ""));
  if (acking) {
    if (signedIn()) {
      const b = el("button", {"data-ack": table + ":" + a.id}, "Acknowledge");
      b.onclick = () => ack(table, a.id);
      box.append(b);
    } else box.append(el("div", {class: "muted"}, "sign in to acknowledge"));
  }
  return box;
}
async function openDetail(name, quiet) {
  opened = name;
  const r = await fetch("/table?name=" + encodeURIComponent(name), {cache: "no-store"});
  const d = document.getElementById("detail");
  if (!r.ok) { d.replaceChildren(el("p", {}, "no such table")); d.hidden = false; return; }
  const t = await r.json();
  if (opened !== name) return;
  const close = el("button", {id: "detail-close"}, "Close");
  close.onclick = () => { opened = null; d.hidden = true; };
  const stub = t.stub && t.stub.count != null ? t.stub.count + " / " + t.stub.required
    + (t.stub.forecast ? " (short on " + t.stub.forecast + ")" : "") : "";
  const kids = [close, el("h2", {}, name), el("div", {}, (t.online ? "" : "OFFLINE \\u00b7 ") + (t.words || "")),
    el("div", {class: "muted"}, [t.hand != null ? "hand " + t.hand : "", stub ? "stub " + stub : "",
      t.shoe && t.shoe.status ? "shoe " + t.shoe.status : "", t.seen_ago_s == null ? "never seen" : "last heard " + t.seen_ago_s + " s ago",
      t.chain ? "record #" + t.chain.seq + " " + t.chain.tag : ""].filter(Boolean).join(" \\u00b7 "))];
  kids.push(el("h3", {}, "Open alerts (" + t.alerts.length + ")"));
  if (t.alerts.length > 1 && signedIn()) {
    const all = el("button", {"data-ack-all": name}, "Acknowledge all " + t.alerts.length);
    all.onclick = () => ack(name, "all"); kids.push(all);
  }
  for (const a of t.alerts) kids.push(alertBox(name, a, true));
  kids.push(el("h3", {}, "Routine (shown, nothing to acknowledge)"));
  for (const a of (t.notices || []).slice().reverse()) kids.push(alertBox(name, a, false));
  kids.push(el("h3", {}, "Acknowledged"));
  for (const a of (t.acknowledged || []).slice().reverse()) {
    kids.push(el("div", {class: "al", "data-acked": name + ":" + a.id}, "\\u2713 " + a.code
      + (a.hand != null ? " (hand " + a.hand + ")" : "")
      + (a.acked.by ? " acknowledged by " + a.acked.by : " cleared: " + (a.acked.cleared || "")) + " at " + a.acked.at_text));
  }
  const h = t.health;  // reader and card health, from the table's newest hand's end (docs/floor.md)
  if (h && h.cards) {
    const pk = h.per_1000 || {};
    kids.push(el("h3", {}, "Reader and cards"));
    kids.push(el("div", {"data-health": name}, h.cards + " cards read; per 1,000: unreadable " + (pk.unreadable ?? 0)
      + ", misreads " + (pk.misreads ?? 0) + ", retries " + (pk.retries ?? 0) + ", foreign " + (pk.foreign ?? 0)));
    for (const tg of (h.tags || []).slice(0, 5)) {
      kids.push(el("div", {class: "muted"}, "deck " + tg.deck + " tag " + tg.tag + ": " + tg.retries + " retries in "
        + tg.reads + " reads (" + tg.per_1000 + " per 1,000)"));
    }
  }
  const rb = el("button", {"data-recall": name}, "Last hands");
  if (!recallBox || recallBox.dataset.table !== name) recallBox = el("div", {id: "recall-body", "data-table": name});
  const rec = recallBox;  // kept while the detail is redrawn for the table's news
  rb.onclick = () => recall(name, rec);
  kids.push(el("h3", {}, "Last hands (downcards stay at the table)"), rb, rec);
  d.replaceChildren(...kids);
  d.style.top = document.querySelector("header").offsetHeight + "px";  // the header (sign-in) stays usable
  d.hidden = false;
  if (!quiet) close.focus();
}
async function recall(table, body) {
  const r = await fetch("/recall?table=" + encodeURIComponent(table), {cache: "no-store"});
  const j = await r.json().catch(() => ({hands: []}));
  body.replaceChildren();
  for (const h of (j.hands || []).slice().reverse()) {
    body.append(el("h4", {}, "Hand " + h.hand + ", started " + h.started + (h.finished ? "" : " (in progress)")));
    for (const e of h.entries) {
      const what = e.kind === "card" ? (e.street || "") + " " + (e.seat ? "seat " + e.seat + " " : "") + e.role + " " + e.card
        : e.kind === "input" ? e.action + (e.seat ? " seat " + e.seat : "") + (e.by ? " (" + e.by + ")" : "")
          + (e.gate ? " [" + e.gate + "]" : "")
        : (e.latched ? "STOP " : "") + e.code + ": " + e.message;
      body.append(el("div", {class: "rc"}, e.t + "  " + what));
    }
  }
}
showSignin(); legend();
poll(); setInterval(poll, 1000);
</script></body></html>
"""
