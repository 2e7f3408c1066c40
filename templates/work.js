(function () {
"use strict";
// The door's proof of work (package challenge): count nonces 0, 1, 2, …
// in base 36 until SHA-256(seed ":" nonce) begins with data-bits zero
// bits, keep the nonce in the cookie data-cookie, and go on to data-next,
// where the edge checks it with one hash and the visitor joins the line.
// The queue page has no data-next: there the nonce (the decoy line's way
// out, which a real place shows alike) waits in its cookie for the page's
// next poll, and the page stays.
// The search runs in a worker, so the page stays responsive; where no
// worker can start it runs here, a slice at a time.
var main = document.getElementById("wr-work");
if (!main) return;
var seed = main.getAttribute("data-seed") || "", bits = +main.getAttribute("data-bits") || 0;
var next = main.getAttribute("data-next"), cookie = main.getAttribute("data-cookie") || "";
var bar = document.getElementById("wr-work-progress"), live = document.getElementById("wr-work-live");
var expected = Math.pow(2, bits), said = 0, began = Date.now();
if (!/^[0-9a-f]{32}$/.test(seed) || !(bits >= 1 && bits <= 24) || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(cookie)) return;
main.setAttribute("aria-busy", "true");
// A tab keeps its solutions: the queue page shows the same challenge at
// every load (a reload, the refresh link), and it is searched once.
var kept = "wr-work:" + seed + ":" + bits;

// solver is the search, self-contained so that a worker can run its
// source: given a worker's scope it answers the page's message with
// progress ({hashes}) and at last the solution ({nonce, hashes}).
function solver(scope) {
	var K = [0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
		0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
		0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
		0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
		0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
		0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
		0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
		0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2];
	var H0 = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
	var w = new Int32Array(64), mid = new Int32Array(8), b = new Uint8Array(64);
	function rotr(x, n) { return (x >>> n) | (x << (32 - n)); }
	// rounds runs SHA-256's rounds from..63 on the state s over w.
	function rounds(s, from, to) {
		var a = s[0], bb = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
		for (var i = from; i < to; i++) {
			var t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i]) | 0;
			var t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & bb) ^ (a & c) ^ (bb & c))) | 0;
			h = g; g = f; f = e; e = (d + t1) | 0; d = c; c = bb; bb = a; a = (t1 + t2) | 0;
		}
		s[0] = a; s[1] = bb; s[2] = c; s[3] = d; s[4] = e; s[5] = f; s[6] = g; s[7] = h;
	}
	var seeded = "";
	// prepare takes the seed's 32 bytes (the block's first eight words)
	// through the first eight rounds once: every nonce starts from there.
	function prepare(seed) {
		for (var i = 0; i < 32; i++) b[i] = seed.charCodeAt(i);
		for (i = 0; i < 8; i++) w[i] = (b[4 * i] << 24) | (b[4 * i + 1] << 16) | (b[4 * i + 2] << 8) | b[4 * i + 3];
		for (i = 0; i < 8; i++) mid[i] = H0[i];
		rounds(mid, 0, 8);
		seeded = seed;
	}
	var s = new Int32Array(8);
	// search tries the nonces from, from+1, … for count of them, and
	// returns the first that solves, or -1. The nonce's digits are
	// counted in place (a string a try would cost more than its hash).
	function search(seed, bits, from, count) {
		if (seed !== seeded) prepare(seed);
		var shift = 32 - bits, text = from.toString(36), d = [], len = 0, i;
		for (i = 0; i < text.length; i++) d.push(text.charCodeAt(i));
		for (var n = from; n < from + count; n++) {
			if (33 + d.length !== len) {
				len = 33 + d.length;
				for (i = 32; i < 64; i++) b[i] = 0;
				b[32] = 58;
				b[len] = 0x80;
				w[15] = len * 8;
			}
			for (i = 0; i < d.length; i++) b[33 + i] = d[i];
			for (i = 8; i < 15; i++) w[i] = (b[4 * i] << 24) | (b[4 * i + 1] << 16) | (b[4 * i + 2] << 8) | b[4 * i + 3];
			for (i = 16; i < 64; i++) {
				var x = w[i - 15], y = w[i - 2];
				w[i] = (w[i - 16] + (rotr(x, 7) ^ rotr(x, 18) ^ (x >>> 3)) + w[i - 7] + (rotr(y, 17) ^ rotr(y, 19) ^ (y >>> 10))) | 0;
			}
			for (i = 0; i < 8; i++) s[i] = mid[i];
			rounds(s, 8, 64);
			if (((H0[0] + s[0]) >>> shift) === 0) return n;
			// The next nonce: 0-9 then a-z in each digit, carried left.
			for (i = d.length - 1; i >= 0; i--) {
				if (d[i] === 57) { d[i] = 97; break; }
				if (d[i] !== 122) { d[i]++; break; }
				d[i] = 48;
			}
			if (i < 0) d.unshift(49);
		}
		return -1;
	}
	if (scope) {
		scope.onmessage = function (m) {
			var d = m.data, n = d.from;
			for (;;) {
				var found = search(d.seed, d.bits, n, 16384);
				if (found >= 0) { scope.postMessage({ nonce: found.toString(36), hashes: found + 1 }); return; }
				n += 16384;
				scope.postMessage({ hashes: n });
			}
		};
	}
	return search;
}

function fill(text, percent) { return (text || "").replace("{percent}", String(percent)); }
function progress(hashes) {
	// The share of searches that would have ended by now: it rises
	// quickly, then slows, and never claims to be done before it is.
	var p = Math.min(99, Math.floor(100 * (1 - Math.exp(-hashes / expected))));
	if (bar) bar.value = p;
	if (live && p >= said + 25) {
		said = p - p % 25;
		live.textContent = fill(main.getAttribute("data-progress"), said);
	}
}
// by is where the search ran: "worker", or "page" once it runs here;
// "kept" when the tab had solved it already.
var by = "worker";
function done(nonce, hashes) {
	try { sessionStorage.setItem(kept, nonce); } catch (x) {}
	document.cookie = cookie + "=" + nonce + "; path=/; max-age=600; samesite=lax" + (location.protocol === "https:" ? "; secure" : "");
	if (bar) bar.value = 100;
	main.setAttribute("aria-busy", "false");
	main.setAttribute("data-hashes", String(hashes));
	main.setAttribute("data-ms", String(Date.now() - began));
	main.setAttribute("data-by", by);
	if (live) live.textContent = main.getAttribute("data-done") || "";
	if (next) location.replace(next);
}
// here searches on the page's own thread, a slice at a time.
function here(from) {
	var search = solver(null), n = from;
	by = "page";
	(function slice() {
		var found = search(seed, bits, n, 8192);
		if (found >= 0) return done(found.toString(36), found + 1);
		n += 8192;
		progress(n);
		setTimeout(slice, 0);
	})();
}
var solved = null;
try { solved = sessionStorage.getItem(kept); } catch (x) {}
if (solved && /^[0-9a-z]{1,12}$/.test(solved)) { by = "kept"; return done(solved, 0); }
var worker = null;
try {
	var url = URL.createObjectURL(new Blob(["(" + solver.toString() + ")(self);"], { type: "text/javascript" }));
	worker = new Worker(url);
} catch (x) { worker = null; }
if (!worker) return here(0);
var heard = 0, over = false;
// instead gives the search to the page when the worker fails: from where
// it had got to.
function instead() {
	if (over) return;
	over = true;
	worker.terminate();
	here(heard);
}
worker.onmessage = function (m) {
	if (over) return;
	if (m.data.nonce !== undefined) {
		over = true;
		worker.terminate();
		done(m.data.nonce, m.data.hashes);
		return;
	}
	heard = m.data.hashes;
	progress(heard);
};
// A worker the page's policy refuses fails without a word in some
// browsers: one that has said nothing in two seconds is replaced.
worker.onerror = instead;
setTimeout(function () { if (!heard) instead(); }, 2000);
worker.postMessage({ seed: seed, bits: bits, from: 0 });
})();
