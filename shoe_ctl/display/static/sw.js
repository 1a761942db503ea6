// The dealer display's service worker: a page load (a reload, a kiosk restarted) while the service
// is down gets the no-service page kept here, never the browser's own error page; that page asks
// the service every second and turns back into the display (docs/display.md, *No service*).
"use strict";
const CACHE = "shoe-ctl-no-service-1";
const PAGE = "/static/no-service.html";

self.addEventListener("install", (ev) => {
  ev.waitUntil(caches.open(CACHE).then((c) => c.add(PAGE)).then(() => self.skipWaiting()));
});
self.addEventListener("activate", (ev) => { ev.waitUntil(self.clients.claim()); });
self.addEventListener("fetch", (ev) => {
  if (ev.request.mode !== "navigate") return;  // the page's own requests go to the service as they are
  ev.respondWith(fetch(ev.request).catch(() => caches.match(PAGE)));
});
