// The waiting room's heartbeat: keeps an admitted reader's place while the
// page is visible, and lets the place go when the page is hidden or left.
(function () {
  "use strict";
  var d = document, every = 10, beacon = false, timer = 0;
  function hidden() { return d.visibilityState !== "visible"; }
  function schedule() {
    clearTimeout(timer);
    if (every > 0 && !hidden()) timer = setTimeout(ping, every * 1000);
  }
  function ping() {
    clearTimeout(timer);
    if (hidden()) return;
    fetch("/_wr/heartbeat", {method: "POST", credentials: "same-origin", cache: "no-store",
      headers: {Accept: "application/json"}})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (a) {
        if (a) { every = +a.next_seconds || 0; beacon = a.leave_beacon === true; }
      }, function () {})
      .then(schedule);
  }
  d.addEventListener("visibilitychange", function () {
    if (hidden()) clearTimeout(timer); else ping();
  });
  addEventListener("pageshow", function (e) { if (e.persisted) ping(); });
  addEventListener("pagehide", function (e) {
    // A page kept for the back button (persisted) may come back: it stops
    // pinging and its place lapses at the inactivity timeout instead.
    if (beacon && !e.persisted && navigator.sendBeacon) navigator.sendBeacon("/_wr/leave");
  });
  ping();
})();
