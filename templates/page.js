(function () {
"use strict";
// The arrival redirect brings a new visitor back to their page with a
// mark (_wr_arrival=…) by which the edge tells a browser that keeps no
// cookies from one that was never given any. The page drops it from its
// address, so that polls, the refresh link, a reload and a bookmark use
// the page's own.
var search = location.search.slice(1), kept = search.split("&").filter(function (p) {
	return p.split("=")[0] !== "_wr_arrival";
}).join("&");
if (kept !== search && window.history && history.replaceState) {
	try { history.replaceState(history.state, "", location.pathname + (kept ? "?" + kept : "") + location.hash); } catch (x) {}
}
var main = document.querySelector("main[data-refresh]");
if (!main || !window.fetch) return;
var lang = main.getAttribute("data-lang") || "en", kind = main.id, fails = 0;
var shown = +main.getAttribute("data-position") || 0, paused = null;
function el(id) { return document.getElementById(id); }
function put(id, text) {
	var e = el(id);
	if (e && typeof text === "string" && e.textContent !== text) e.textContent = text;
}
function later(seconds) {
	var s = +seconds;
	if (!(s > 0)) s = +main.getAttribute("data-refresh") || 10;
	s = Math.min(Math.max(s, 1), 600);
	setTimeout(poll, s * (800 + Math.random() * 400));
}
// stamp shows when the place was last read, in the visitor's own time
// zone, named (the edge can only write UTC); with no time given, it shows
// the time the edge wrote, in the same form. The hours run 00 to 23 in
// every language, as the edge writes them: English would otherwise say
// AM and PM.
function stamp(now) {
	var e = el("wr-updated");
	if (!e) return;
	now = now || new Date();
	if (isNaN(now)) return;
	e.setAttribute("datetime", now.toISOString());
	try {
		e.textContent = now.toLocaleTimeString(lang, { hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23", timeZoneName: "short" });
	} catch (x) { e.textContent = now.toISOString().slice(11, 19) + " UTC"; }
}
function announce(j, d) {
	var n = +j.position || 0, moved = shown - n;
	if (paused !== null && paused !== !!j.paused || moved !== 0 && (Math.abs(moved) >= Math.max(1, Math.ceil(shown / 10)) || n <= 3)) {
		put("wr-status", d.announce);
		shown = n;
	}
	paused = !!j.paused;
}
function show(j) {
	var d = j.display || {}, p = el("wr-progress");
	put("wr-position", d.position);
	put("wr-ahead", d.ahead);
	put("wr-wait", d.wait);
	put("wr-note", d.status);
	put("wr-ticket", d.ticket);
	put("wr-serving", d.now_serving);
	if (p && d.progress_max > 0) {
		p.max = d.progress_max;
		p.value = Math.min(Math.max(d.progress, 0), d.progress_max);
		p.textContent = p.value + "/" + p.max;
	}
	announce(j, d);
	stamp();
}
function own(url) {
	return typeof url === "string" && url.charAt(0) === "/" && url.charAt(1) !== "/" && url.charAt(1) !== "\\";
}
function answer(j) {
	fails = 0;
	switch (j.status) {
	case "admitted":
		if (own(j.url)) location.replace(j.url); else location.reload();
		return;
	case "waiting":
		if (kind !== "wr-queue") { location.reload(); return; }
		show(j);
		later(j.refresh_seconds);
		return;
	case "prequeue":
		if (kind !== "wr-prequeue") { location.reload(); return; }
		put("wr-opens", (j.display || {}).opens_in);
		stamp();
		later(j.refresh_seconds);
		return;
	case "closed":
		// The operator closed the room: show its page rather than a
		// place that no longer moves.
		location.reload();
		return;
	}
	later(j.retry_after_seconds);
}
function poll() {
	fetch(location.href, {
		headers: { "Accept": "application/json", "Waiting-Room-Poll": "1" },
		credentials: "same-origin", cache: "no-store"
	}).then(function (r) {
		if ((r.headers.get("Content-Type") || "").indexOf("application/json") < 0) {
			if (r.ok) { location.reload(); return null; }
			throw new Error("status " + r.status);
		}
		return r.json();
	}).then(function (j) {
		if (j) answer(j);
	}).catch(function () {
		fails++;
		later((+main.getAttribute("data-refresh") || 10) * Math.pow(2, Math.min(fails, 4)));
	});
}
if (el("wr-updated")) stamp(new Date(el("wr-updated").getAttribute("datetime")));
later();
})();
