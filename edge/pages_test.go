package edge

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/challenge"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/templates"
	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/fsttest"
)

// kvTemplates is a KV store of operator templates.
type kvTemplates map[string]string

func (k kvTemplates) Get(name string) (string, error) {
	if src, ok := k[name]; ok {
		return src, nil
	}
	return "", ErrNotFound
}

// pageRoom is a room with a look: branding, a dark theme, and the
// operator's words in German.
func pageRoom(t *testing.T, look string) *queue.Room {
	t.Helper()
	doc := `{"paths":["/"],"max_active_users":5`
	if look != "" {
		doc += "," + look
	}
	room, err := queue.ParseRoom("shop", []byte(doc+"}"))
	if err != nil {
		t.Fatal(err)
	}
	return room
}

// showPlace renders the queue page (or its JSON) of pl for a request
// with the headers given.
func showPlace(t *testing.T, kv Templates, room *queue.Room, pl queue.Place, headers map[string]string) *fsttest.ResponseRecorder {
	t.Helper()
	s := testRequest(&Handler{Templates: kv, Now: fixed(time.Date(2030, 5, 1, 9, 30, 15, 0, time.UTC)), Logf: t.Logf})
	r := hostileRequest(t, "GET", "https", "shop.example.com", "/sale/?item=1")
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	w := fsttest.NewRecorder()
	secure(w.Header(), pagePolicy)
	s.queuePage(w, r, room, queue.Decision{Action: queue.Wait, Place: pl})
	return w
}

// waiting is a place 1,234 ahead of 2,000 at arrival, admissions observed.
var waiting = queue.Place{Room: "shop", Ticket: 48213, Admitted: 46978, Issued: 52977, Ahead: 1234, AheadMax: 1234,
	Wait: 10 * time.Minute, WaitMin: 10 * time.Minute, WaitKnown: true, PollEvery: 10 * time.Second, StartAhead: 2000}

func TestQueuePageLanguages(t *testing.T) {
	room := pageRoom(t, `"language":"de"`)
	tests := []struct {
		accept, lang string
		want         []string
	}{
		{"", "de", []string{"Sie sind in der Warteschlange", "1.235", "1.234", "6–13 Minuten", "Zurzeit an der Reihe", "Sie sind jetzt Nummer 1.235 in der Schlange."}},
		{"en-GB,en;q=0.9", "en", []string{"You are in line", "1,235", "6–13 minutes", "You are now number 1,235 in line.", "you will continue to the page you asked for"}},
		{"fr-CH, fr;q=0.9", "fr", []string{"Vous êtes dans la file d’attente", "1\u202f235", "6–13\u00a0minutes"}},
		{"es", "es", []string{"Está en la fila", "1235", "6–13 minutos"}},
		{"ja,en;q=0.5", "ja", []string{"順番待ちの列に並んでいます", "1,235", "6～13分", "現在1,235番目です。"}},
		{"pt-BR", "pt", []string{"Você está na fila", "1.235", "6–13 minutos"}},
		{"nl", "de", []string{"Sie sind in der Warteschlange"}},
	}
	for _, tc := range tests {
		w := showPlace(t, noTemplates{}, room, waiting, map[string]string{"Accept-Language": tc.accept})
		body := w.Body.String()
		if w.Code != 200 || !strings.Contains(body, `<html lang="`+tc.lang+`">`) || !strings.Contains(body, `data-lang="`+tc.lang+`"`) {
			t.Errorf("%q: %d, want lang %s: %.300s", tc.accept, w.Code, tc.lang, body)
		}
		for _, want := range tc.want {
			if !strings.Contains(body, want) {
				t.Errorf("%q: no %q on the page", tc.accept, want)
			}
		}
		if v := w.HeaderMap.Values("Vary"); len(v) != 1 || v[0] != "Accept-Language" {
			t.Errorf("%q: Vary %q", tc.accept, v)
		}
	}
}

// TestQueuePageContract: the elements the page's script, the browser
// suite and the heartbeat rely on, the no-script fallback, and no
// Refresh header.
func TestQueuePageContract(t *testing.T) {
	w := showPlace(t, noTemplates{}, pageRoom(t, ""), waiting, nil)
	body, h := w.Body.String(), w.HeaderMap
	for _, want := range []string{
		`<main id="wr-queue" data-refresh="10" data-lang="en" data-position="1235">`,
		`<dd id="wr-position">1,235</dd>`, `<dd id="wr-ahead">1,234</dd>`, `<dd id="wr-wait">6–13 minutes</dd>`,
		`<time id="wr-updated" datetime="2030-05-01T09:30:15Z">09:30:15 UTC</time>`,
		`<progress id="wr-progress" value="766" max="2000">766/2000</progress>`,
		`<p id="wr-status" role="status" aria-live="polite">You are now number 1,235 in line.</p>`,
		`<p id="wr-message"></p>`, `<a id="wr-refresh" href="">Refresh now</a>`,
		`<noscript><meta http-equiv="refresh" content="10"></noscript>`,
		`<dd id="wr-ticket">#48213</dd>`, `<dd id="wr-serving">#46978</dd>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s", want)
		}
	}
	if strings.Count(body, "http-equiv") != 1 || h.Get("Refresh") != "" {
		t.Errorf("a refresh outside <noscript>: header %q", h.Get("Refresh"))
	}
	if h.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q", h.Get("Cache-Control"))
	}
}

// TestQueuePagePolicy: the page's Content-Security-Policy allows exactly
// its inline script and styles, by hash, and no inline code otherwise.
func TestQueuePagePolicy(t *testing.T) {
	w := showPlace(t, noTemplates{}, pageRoom(t, `"brand_color":"#8ab4f8","background_color":"#101418"`), waiting, nil)
	body, policy := w.Body.String(), w.HeaderMap.Get("Content-Security-Policy")
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	scripts := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindAllStringSubmatch(body, -1)
	styles := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindAllStringSubmatch(body, -1)
	// The page's script, and the proof of work's (a decoy's way out).
	if len(scripts) != 2 || len(styles) != 2 {
		t.Fatalf("%d scripts, %d styles", len(scripts), len(styles))
	}
	want := "default-src 'none'; script-src " + hash(scripts[0][1]) + " " + hash(scripts[1][1]) + "; style-src 'self' " + hash(styles[0][1]) + " " + hash(styles[1][1]) +
		"; img-src 'self' https: data:; font-src 'self'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'; worker-src blob:"
	if policy != want {
		t.Errorf("policy\n%s\nwant\n%s", policy, want)
	}
	if styles[1][1] != ":root{--wr-bg:#101418;--wr-fg:#ffffff;--wr-brand:#8ab4f8;--wr-on-brand:#000000}" {
		t.Errorf("theme %q", styles[1][1])
	}
}

// TestQueuePageEscapes: the operator's words and a hostile language
// header cannot add markup; an operator template with a script of its own
// is served with that script's hash, and a broken one falls back.
func TestQueuePageEscapes(t *testing.T) {
	room := pageRoom(t, `"title":"<b>Shop</b> & co","message":"Sale \"today\" <script>alert(1)</script>",`+
		`"support_link":"https://help.example.com/?a=1&b=2","logo_url":"https://cdn.example.com/l.svg",`+
		`"texts":{"de":{"message":"<img src=x onerror=alert(1)>"}}`)
	w := showPlace(t, noTemplates{}, room, waiting, map[string]string{"Accept-Language": `"><script>x</script>`})
	body := w.Body.String()
	for _, want := range []string{
		`<h1>&lt;b&gt;Shop&lt;/b&gt; &amp; co</h1>`, `<title>&lt;b&gt;Shop&lt;/b&gt; &amp; co</title>`,
		`<p id="wr-message">Sale &#34;today&#34; &lt;script&gt;alert(1)&lt;/script&gt;</p>`,
		`<a href="https://help.example.com/?a=1&amp;b=2">Need help? Contact support</a>`,
		`<img class="wr-logo" src="https://cdn.example.com/l.svg" alt="">`, `<html lang="en">`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s", want)
		}
	}
	if strings.Count(body, "<script>") != 2 {
		t.Errorf("%d scripts, want the page's and the proof of work's", strings.Count(body, "<script>"))
	}
	w = showPlace(t, noTemplates{}, room, waiting, map[string]string{"Accept-Language": "de"})
	if !strings.Contains(w.Body.String(), `<p id="wr-message">&lt;img src=x onerror=alert(1)&gt;</p>`) {
		t.Error("the German message is not the operator's, escaped")
	}

	own := kvTemplates{"queue.html": "<html><script>go()</script><p>{{position}}</p>", "broken.html": "<script>{{room}}</script>"}
	w = showPlace(t, own, room, waiting, nil)
	if w.Body.String() != "<html><script>go()</script><p>1,235</p>" ||
		!strings.Contains(w.HeaderMap.Get("Content-Security-Policy"), "script-src 'sha256-") {
		t.Errorf("operator template: %s %s", w.Body, w.HeaderMap.Get("Content-Security-Policy"))
	}
	room.Template = "broken.html"
	logs := []string{}
	s := testRequest(&Handler{Templates: own, Now: fixed(time.Unix(0, 0)), Logf: func(f string, a ...any) { logs = append(logs, f) }})
	if tpl := s.template(room.Template, templates.Queue); tpl == nil || len(logs) != 1 {
		t.Errorf("a broken template: %v, logs %q", tpl, logs)
	}
}

// TestQueuePageJSON: a client asking for JSON gets the page's words
// in its language, with the progress and the announcement.
func TestQueuePageJSON(t *testing.T) {
	paused := waiting
	paused.Paused, paused.WaitKnown = true, false
	random := waiting
	random.Random, random.AheadMax, random.GroupsAhead, random.WaitMin, random.Wait = true, 1300, 4, 5*time.Minute, 9*time.Minute
	fresh := waiting
	fresh.StartAhead, fresh.WaitKnown, fresh.Unknown = 0, false, queue.UnknownFull
	first := paused
	first.Ticket, first.Admitted, first.Issued, first.Ahead, first.AheadMax, first.StartAhead = 1, 0, 1, 0, 0, 0
	held := waiting
	held.WaitKnown, held.Unknown, held.Priority, held.Ticket = false, queue.UnknownBeforeStart, true, -48213
	tests := []struct {
		name   string
		pl     queue.Place
		accept string
		want   placeDisplay
	}{
		{"waiting", waiting, "fr", placeDisplay{Language: "fr", Position: "1\u202f235", Ahead: "1\u202f234", Wait: "6–13\u00a0minutes",
			Status: "Le site est très sollicité\u202f; les visiteurs entrent dans l’ordre d’arrivée.", Announce: "Vous êtes maintenant n°\u00a01\u202f235 dans la file.",
			Ticket: "#48213", NowServing: "#46978", Progress: ptr(766), ProgressMax: ptr(2000)}},
		{"paused", paused, "en", placeDisplay{Language: "en", Position: "1,235", Ahead: "1,234", Wait: "unknown while entry is paused",
			Status: "The site is busy, so visitors are let in as places free up, in the order they arrived.", Announce: "Entry is paused for the moment; your place is kept.",
			Ticket: "#48213", NowServing: "#46978", Progress: ptr(766), ProgressMax: ptr(2000)}},
		{"random", random, "en", placeDisplay{Language: "en", Position: "1,235–1,301", Ahead: "1,234–1,300", Wait: "5–9 minutes",
			Status:   "The site is busy. Visitors who arrived within the same 60 seconds form a group, and within a group the order is random. Groups ahead of yours: 4.",
			Announce: "You are now number 1,235–1,301 in line.", Ticket: "#48213", NowServing: "#46978", Progress: ptr(766), ProgressMax: ptr(2000)}},
		{"no start, the room full", fresh, "ja", placeDisplay{Language: "ja", Position: "1,235", Ahead: "1,234", Wait: "まだ不明です（満員で、最近退出した人がほとんどいません）",
			Status: "サイトが混雑しているため、到着順にご案内しています。", Announce: "現在1,235番目です。", Ticket: "#48213", NowServing: "#46978", Progress: ptr(0), ProgressMax: ptr(1)}},
		{"first in a paused room that has let nobody in", first, "de", placeDisplay{Language: "de", Position: "1", Ahead: "0", Wait: "unbekannt, solange der Einlass angehalten ist",
			Status: "Die Seite ist gerade stark besucht, daher werden Besucher in der Reihenfolge ihrer Ankunft eingelassen.", Announce: "Der Einlass ist im Moment angehalten; Ihr Platz bleibt erhalten.",
			Ticket: "#1", NowServing: "noch niemand", Progress: ptr(0), ProgressMax: ptr(1)}},
		{"priority lane before the sale", held, "en", placeDisplay{Language: "en", Position: "1,235", Ahead: "1,234", Wait: "not known before the sale opens",
			Status:   "You hold a priority place: invited visitors are let in ahead of the line, with up to 20% of the places, so the line keeps moving too.",
			Announce: "You are now number 1,235 in line.", Ticket: "#P48213", NowServing: "#P46978", Progress: ptr(766), ProgressMax: ptr(2000)}},
	}
	room := pageRoom(t, "")
	for _, tc := range tests {
		w := showPlace(t, noTemplates{}, room, tc.pl, map[string]string{"Accept": "application/json", "Accept-Language": tc.accept})
		var doc placeJSON
		if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil || doc.Display == nil {
			t.Fatalf("%s: %s: %v", tc.name, w.Body, err)
		}
		got, _ := json.Marshal(doc.Display)
		if want, _ := json.Marshal(tc.want); string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, want)
		}
		if w.HeaderMap.Get("Vary") != "Accept-Language" || w.HeaderMap.Get("Refresh") != "" {
			t.Errorf("%s: headers %v", tc.name, w.HeaderMap)
		}
	}
}

// TestBusyAndClosedPages: translated, themed, with their policies.
func TestBusyAndClosedPages(t *testing.T) {
	room := pageRoom(t, `"texts":{"es":{"closed_text":"Vuelva el lunes."}}`)
	s := testRequest(&Handler{Templates: noTemplates{}, Now: fixed(time.Unix(0, 0)), Logf: t.Logf})
	for _, tc := range []struct {
		name   string
		serve  func(w fsthttp.ResponseWriter, r *fsthttp.Request)
		accept string
		want   []string
	}{
		{"busy", func(w fsthttp.ResponseWriter, r *fsthttp.Request) { s.busy(w, r, room) }, "de",
			[]string{`<html lang="de">`, "Gerade ausgelastet, neuer Versuch folgt", "in 5 Sekunden erneut", `<main id="wr-busy" data-refresh="5" data-lang="de">`,
				`<noscript><meta http-equiv="refresh" content="5"></noscript>`}},
		{"closed", func(w fsthttp.ResponseWriter, r *fsthttp.Request) { s.closedPage(w, r, room) }, "es",
			[]string{`<html lang="es">`, "<h1>Cerrado por ahora</h1>", "Vuelva el lunes."}},
		{"closed", func(w fsthttp.ResponseWriter, r *fsthttp.Request) { s.closedPage(w, r, room) }, "ja",
			[]string{`<html lang="ja">`, "<h1>現在受付を停止しています</h1>"}},
	} {
		r := hostileRequest(t, "GET", "https", "shop.example.com", "/")
		r.Header.Set("Accept-Language", tc.accept)
		w := fsttest.NewRecorder()
		tc.serve(w, r)
		body := w.Body.String()
		for _, want := range tc.want {
			if !strings.Contains(body, want) {
				t.Errorf("%s %s: no %q in %.200s", tc.name, tc.accept, want, body)
			}
		}
		if w.Code != 503 || w.HeaderMap.Get("Vary") != "Accept-Language" || !strings.Contains(w.HeaderMap.Get("Content-Security-Policy"), "style-src 'self' 'sha256-") {
			t.Errorf("%s: %d %v", tc.name, w.Code, w.HeaderMap)
		}
	}
}

// BenchmarkQueuePage is a waiting visitor's page as the edge writes it
// for a German browser in a branded room: the language negotiated, the
// place worded, the template rendered and its policy written.
func BenchmarkQueuePage(b *testing.B) {
	room, err := queue.ParseRoom("shop", []byte(`{"paths":["/"],"max_active_users":5,"title":"Shop","message":"Big sale today",`+
		`"brand_color":"#7a1f5c","support_link":"https://help.example.com/"}`))
	if err != nil {
		b.Fatal(err)
	}
	s := testRequest(&Handler{Templates: noTemplates{}, Now: fixed(time.Unix(1_900_000_000, 0)), Logf: b.Logf})
	r, err := fsthttp.NewRequest("GET", "https://shop.example.com/sale/", nil)
	if err != nil {
		b.Fatal(err)
	}
	r.Header.Set("Accept-Language", "de-DE,de;q=0.9,en;q=0.8")
	d := queue.Decision{Action: queue.Wait, Place: waiting}
	var w *fsttest.ResponseRecorder
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w = fsttest.NewRecorder()
		s.queuePage(w, r, room, d)
	}
	b.StopTimer()
	if body := w.Body.String(); w.Code != 200 || !strings.Contains(body, "6–13 Minuten") {
		b.Fatalf("%d %.300s", w.Code, body)
	}
	b.Logf("page: %d bytes", w.Body.Len()) // TinyGo's testing has no ReportMetric
}

func ptr(n int64) *int64 { return &n }

// TestADecoysPageHasItsWayOut: a decoy's place is the room's queue page
// (or JSON) with the top rung's challenge for its script (work.js); an
// operator's queue template without that script gives way to the built-in
// page for a decoy, and only for a decoy.
func TestADecoysPageHasItsWayOut(t *testing.T) {
	room := pageRoom(t, `"proof_of_work":16`)
	c := challenge.For("shop", "0123456789abcdef0123456789abcdef", "", 16)
	decoy := queue.Decision{Action: queue.Decoy, Place: waiting, Challenge: c}
	show := func(kv Templates, d queue.Decision, header ...string) string {
		t.Helper()
		s := testRequest(&Handler{Templates: kv, Now: fixed(time.Unix(1_900_000_000, 0)), Logf: t.Logf})
		r := hostileRequest(t, "GET", "https", "shop.example.com", "/sale/")
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		w := fsttest.NewRecorder()
		s.queuePage(w, r, room, d)
		return w.Body.String()
	}
	way := `<div id="wr-work" hidden data-seed="` + c.Seed + `" data-bits="16" data-cookie="wr_shop_work">`
	if page := show(noTemplates{}, decoy); !strings.Contains(page, way) || !strings.Contains(page, "You are in line") {
		t.Errorf("the decoy's page has no way out (%s):\n%.400s", way, page)
	}
	if page := show(noTemplates{}, queue.Decision{Action: queue.Wait, Place: waiting}); !strings.Contains(page, `<div id="wr-work" hidden data-seed="" data-bits="" data-cookie="">`) {
		t.Errorf("a real place's page carries work:\n%.400s", page)
	}
	own := kvTemplates{"queue.html": "<html><p>{{position}}</p>"}
	if page := show(own, queue.Decision{Action: queue.Wait, Place: waiting}); page != "<html><p>1,235</p>" {
		t.Errorf("the operator's template for a real place: %q", page)
	}
	if page := show(own, decoy); !strings.Contains(page, way) {
		t.Errorf("a decoy in a room whose template cannot do its work: %.200q, want the built-in page", page)
	}
	doc := show(noTemplates{}, decoy, "Accept", "application/json")
	if !strings.Contains(doc, `"status":"waiting"`) || !strings.Contains(doc, `"challenge":{"seed":"`+c.Seed+`","bits":16,"header":"Waiting-Room-Work"}`) {
		t.Errorf("the decoy's JSON: %s", doc)
	}
}
