package admin

import (
	"context"
	"fmt"
	"html"
	"io"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/control"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// refreshSeconds is how often the panel reloads itself, unless the
// operator turns it off (?refresh=off): a timed refresh must be
// adjustable (WCAG 2.2.1), and it would wipe a half-typed form.
const refreshSeconds = 30

// style is the panel's only styling: readable contrast (4.5:1 and more),
// a focus ring that shows on every control, and a grid of charts. On a
// phone (under 40rem) the page keeps to the screen's width: the wide
// tables (class "cards") stand as one card per row, each cell labelled
// with its column's name by cardLabels, and the numbers of "Now" stand
// each under its name.
const style = `body{font-family:system-ui,sans-serif;margin:1.5rem;color:#1d2330;background:#fff;line-height:1.45;max-width:80rem}
a{color:#1747a6}h2{margin-top:2.5rem;border-top:2px solid #1d2330;padding-top:.5rem}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #8a93a1;padding:.3rem .6rem;text-align:right}
th:first-child,td:first-child{text-align:left}caption{text-align:left;font-weight:600;padding:.3rem 0}
form{display:inline-block;margin:.3rem .6rem .3rem 0;vertical-align:bottom}fieldset{border:1px solid #8a93a1;border-radius:4px}
label{font-weight:600;margin-right:.3rem}.field{display:inline-block;margin:.2rem .8rem .2rem 0}.field label{display:block}
input,select,button{font:inherit;padding:.3rem .5rem;border:1px solid #5b6472;border-radius:4px;background:#fff;color:#1d2330;max-width:100%}
button{background:#1747a6;border-color:#1747a6;color:#fff;cursor:pointer}button.danger{background:#a4161a;border-color:#a4161a}
:focus-visible{outline:3px solid #0b0c0c;outline-offset:3px}summary{cursor:pointer;color:#1747a6}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.15rem 1rem}dt{font-weight:600}dd{margin:0}p,dd,td{overflow-wrap:break-word}
.hint{color:#4a5361}.error{color:#a4161a;font-weight:600}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(30rem,100%),1fr));gap:1.5rem 2rem}figure{margin:0}figcaption{font-weight:600}figure svg{max-width:44rem}
.vh{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
@media (max-width:40rem){body{margin:.75rem}td,th{padding:.25rem .4rem}fieldset{min-width:0}
dl{grid-template-columns:minmax(0,1fr);gap:0}dd{margin-bottom:.4rem}
.cards,.cards caption,.cards tbody,.cards tr{display:block}.cards thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
.cards tr{border:1px solid #8a93a1;border-radius:4px;margin:.6rem 0}
.cards tbody th,.cards td,.cards td:first-child{border:0;display:block;text-align:right}
.cards tbody tr>:first-child{font-weight:600;background:#eef1f5}.cards tbody tr>::before{font-weight:600;float:left;margin-right:1rem}.cards td[colspan]::before{content:none}}`

// cardLabels labels the cells of the table sel with columns on a phone,
// where its head is out of sight (see style).
func cardLabels(sel string, columns []string) string {
	var b strings.Builder
	b.WriteString("@media (max-width:40rem){")
	for i, c := range columns {
		fmt.Fprintf(&b, "%s tbody tr>:nth-child(%d)::before{content:%q}", sel, i+1, c)
	}
	b.WriteString("}")
	return b.String()
}

// tableHead is a table's head row of columns.
func tableHead(b *strings.Builder, columns []string) {
	b.WriteString("<thead><tr>")
	for _, c := range columns {
		b.WriteString(`<th scope="col">` + html.EscapeString(c) + "</th>")
	}
	b.WriteString("</tr></thead>")
}

// page is a whole HTML page around body; refresh > 0 reloads it.
func page(title string, refresh int, body string) string {
	meta := ""
	if refresh > 0 {
		meta = `<meta http-equiv="refresh" content="` + strconv.Itoa(refresh) + `">`
	}
	return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` + meta +
		"<title>" + html.EscapeString(title) + "</title><style>" + style + cardLabels("#rooms", roomColumns) + cardLabels("#audit table", auditColumns) + cardLabels(".limits", limitColumns) + "</style></head><body>" + body + "</body></html>\n"
}

func writePage(w fsthttp.ResponseWriter, code int, s string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	io.WriteString(w, s)
}

// failed answers a request the panel could not carry out with a page
// that says why and leads back.
func (p *Panel) failed(w fsthttp.ResponseWriter, r *fsthttp.Request, code int, title, msg string) {
	writePage(w, code, page(title+" · Waiting room admin", 0, "<main><h1>"+html.EscapeString(title)+`</h1><p class="error">`+
		html.EscapeString(msg)+`</p><p><a href="`+html.EscapeString(p.link(view{refreshOff: refreshOff(r)}))+`">Back to the panel</a></p></main>`))
}

// refreshOff reports whether the operator turned the refresh off.
func refreshOff(r *fsthttp.Request) bool { return r.URL.Query().Get("refresh") == "off" }

// auditCalls is what the panel's page keeps of the request's store calls
// for the audit log: two calls read the newest entries of up to 400
// rooms (store.MaxAuditPage each).
const auditCalls = 2

// roomsPerPage is the most rooms a page of the panel shows: three, a page
// short enough to read with each room's forms and charts. A page of
// sharded rooms shows fewer: its rooms cost control.StatsCost each (their
// line and day of history, per shard), within roomCalls.
const roomsPerPage = 3

// roomCalls is what a page's rooms may spend: the audit log under them
// keeps auditCalls, all within control.MaxStoreCalls.
const roomCalls = control.MaxStoreCalls - auditCalls

// view is what the query asks the overview to show.
type view struct {
	refreshOff bool
	roomsPage  int // from 1
	// audit is the audit log's cursor: "" for its newest entries.
	audit string
}

// link is the panel's own address showing v.
func (p *Panel) link(v view) string {
	var q []string
	if v.refreshOff {
		q = append(q, "refresh=off")
	}
	if v.roomsPage > 1 {
		q = append(q, "rooms_page="+strconv.Itoa(v.roomsPage))
	}
	if v.audit != "" {
		q = append(q, "audit="+url.QueryEscape(v.audit))
	}
	if len(q) == 0 {
		return p.Path
	}
	return p.Path + "?" + strings.Join(q, "&")
}

// pages are the index of the first room of each page of rooms, as
// control.Page cuts them.
func (p *Panel) pages() []int {
	starts := []int{0}
	for to := control.Page(p.Rooms, 0, roomsPerPage, roomCalls); to < len(p.Rooms); to = control.Page(p.Rooms, to, roomsPerPage, roomCalls) {
		starts = append(starts, to)
	}
	return starts
}

// lastRoomsPage is the number of pages the rooms take.
func (p *Panel) lastRoomsPage() int { return len(p.pages()) }

// pageOf is the page of pages that shows the room at index i.
func pageOf(pages []int, i int) int {
	n := 1
	for n < len(pages) && pages[n] <= i {
		n++
	}
	return n
}

func roomAnchor(i int) string {
	if i < 0 {
		return "rooms"
	}
	return "room-" + strconv.Itoa(i)
}

// parseView reads the overview's query, or says which parameter is
// wrong.
func (p *Panel) parseView(r *fsthttp.Request) (view, string) {
	q := r.URL.Query()
	v := view{roomsPage: 1, audit: q.Get("audit")}
	switch q.Get("refresh") {
	case "off":
		v.refreshOff = true
	case "":
	default:
		return v, fmt.Sprintf("refresh must be off, or left out; not %q.", q.Get("refresh"))
	}
	if s := q.Get("rooms_page"); s != "" {
		n, err := strconv.Atoi(s)
		if last := p.lastRoomsPage(); err != nil || n < 1 || n > last {
			return v, fmt.Sprintf("rooms_page must be a whole number from 1 to %d; not %q.", last, s)
		}
		v.roomsPage = n
	}
	return v, ""
}

// overview is the panel's page: a page of rooms at a glance, then each
// one's numbers, live values, controls and charts, then the audit log of
// every room. Pages of rooms cut by what they cost (roomCalls) keep its
// store calls within control.MaxStoreCalls however many rooms and shards
// there are.
func (p *Panel) overview(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
	v, problem := p.parseView(r)
	if problem != "" {
		p.Logf("admin: refused %q: %s", r.URL.RawQuery, problem)
		p.failed(w, r, fsthttp.StatusBadRequest, "No such view", problem)
		return
	}
	refresh := refreshSeconds
	if v.refreshOff {
		refresh = 0
	}
	csrf := html.EscapeString(p.csrfToken(p.Now.Unix() / 3600))
	// Without an id of the page's, each action is named afresh when it
	// is made: only a form sent twice is then not known as one.
	pageID, err := store.NewActionID()
	if err != nil {
		p.Logf("admin: %v", err)
	}
	var b strings.Builder
	b.WriteString(`<header><h1>Waiting room admin</h1><p>Updated at <time datetime="` + p.Now.UTC().Format(time.RFC3339) + `">` +
		p.Now.UTC().Format("15:04:05 UTC, 2 January 2006") + "</time>. ")
	toggled := v
	toggled.refreshOff = !v.refreshOff
	if v.refreshOff {
		b.WriteString(`Automatic refresh is off. <a href="` + html.EscapeString(p.link(toggled)) + `">Refresh every ` +
			strconv.Itoa(refreshSeconds) + ` seconds</a>`)
	} else {
		b.WriteString(`The page refreshes every ` + strconv.Itoa(refreshSeconds) + ` seconds. <a href="` +
			html.EscapeString(p.link(toggled)) + `">Turn automatic refresh off</a> (before filling in a form)`)
	}
	b.WriteString(`.</p>`)
	if len(p.Rooms) == 0 {
		b.WriteString("<p>No rooms are configured.</p>")
	} else {
		b.WriteString(`<nav aria-label="Rooms"><p>Rooms: `)
		pages := p.pages()
		for i, room := range p.Rooms {
			if i > 0 {
				b.WriteString(", ")
			}
			href := "#" + roomAnchor(i)
			if pageOf(pages, i) != v.roomsPage {
				href = p.link(view{refreshOff: v.refreshOff, roomsPage: pageOf(pages, i)}) + href
			}
			b.WriteString(`<a href="` + html.EscapeString(href) + `">` + html.EscapeString(room.Name) + `</a>`)
		}
		b.WriteString(`; <a href="#audit">audit log</a>.</p></nav>`)
	}
	b.WriteString("</header><main>")

	first := min(len(p.Rooms), p.pages()[v.roomsPage-1])
	rooms := p.Rooms[first:control.Page(p.Rooms, first, roomsPerPage, roomCalls)]
	readings := make([]reading, len(rooms))
	for i, room := range rooms {
		rd := &readings[i]
		if rd.stats, rd.points, rd.err = p.Op.Overview(ctx, room.Name, daySpan); rd.err != nil {
			p.Logf("admin: reading room %s failed: %v", room.Name, rd.err)
		}
	}
	p.summary(&b, v, first, readings)
	q := ""
	if v.refreshOff {
		q = "?refresh=off"
	}
	for i, room := range rooms {
		p.roomSection(&b, first+i, room, readings[i], forms{csrf: csrf, query: q, id: pageID})
	}
	if bad := p.auditSection(ctx, &b, v); bad != nil {
		problem := "audit " + bad.Message + "."
		p.Logf("admin: refused %q: %s", r.URL.RawQuery, problem)
		p.failed(w, r, fsthttp.StatusBadRequest, "No such view", problem)
		return
	}
	b.WriteString("</main>")
	writePage(w, fsthttp.StatusOK, page("Waiting room admin", refresh, b.String()))
}

// reading is what the panel read of a room.
type reading struct {
	stats  control.Stats
	points []control.Point
	err    error
}

// summary is the page's rooms in one table, the first at index first,
// and the way to the other pages. Its first seven columns keep the order
// and markup of the panel's first version, which the end-to-end suites
// read.
func (p *Panel) summary(b *strings.Builder, v view, first int, readings []reading) {
	if len(p.Rooms) == 0 {
		return
	}
	caption := "All rooms now"
	if p.lastRoomsPage() > 1 {
		caption = fmt.Sprintf("Rooms %d to %d of %d, now", first+1, first+len(readings), len(p.Rooms))
	}
	b.WriteString(`<table id="rooms" class="cards"><caption>` + caption + `</caption>`)
	tableHead(b, roomColumns)
	b.WriteString("<tbody>")
	for i, rd := range readings {
		name := html.EscapeString(p.Rooms[first+i].Name)
		if rd.err != nil {
			b.WriteString(`<tr><td>` + name + `</td><td colspan="9">store did not answer: ` + html.EscapeString(rd.err.Error()) + `</td></tr>`)
			continue
		}
		st := rd.stats
		fmt.Fprintf(b, `<tr><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td></tr>`,
			name, html.EscapeString(st.Mode), st.QueueLength, st.NowServing, st.Issued, st.ActiveSessions, st.Called,
			intLimit(st.Effective.MaxActiveUsers), floatLimit(st.Effective.NewUsersPerMinute), state(st))
	}
	b.WriteString("</tbody></table>")
	if p.lastRoomsPage() == 1 {
		return
	}
	// Each page of rooms starts the audit log again from its newest.
	b.WriteString(`<nav aria-label="Pages of rooms"><p>`)
	if v.roomsPage > 1 {
		b.WriteString(`<a href="` + html.EscapeString(p.link(view{refreshOff: v.refreshOff, roomsPage: v.roomsPage - 1})) + `" rel="prev">Previous rooms</a> `)
	}
	if v.roomsPage < p.lastRoomsPage() {
		b.WriteString(`<a href="` + html.EscapeString(p.link(view{refreshOff: v.refreshOff, roomsPage: v.roomsPage + 1})) + `" rel="next">Next rooms</a>`)
	}
	b.WriteString(`</p></nav>`)
}

// roomColumns are the summary table's columns.
var roomColumns = []string{"Room", "Mode", "Waiting", "Now serving", "Issued", "Active", "Called", "Capacity", "Rate / min", "State"}

// forms is what every form on the page carries: the CSRF token (escaped)
// and the view's query, so that the answer comes back to the same view;
// and the page's id, which with the form's action names the action it
// posts (store.Action.ID), so that a form sent again (a reload, a retry
// after a store failure) applies only where it has not yet.
type forms struct{ csrf, query, id string }

// open starts a form posting to action for room (escaped).
func (f forms) open(p *Panel, action, room, class string) string {
	if class != "" {
		class = ` class="` + class + `"`
	}
	id := ""
	if f.id != "" {
		id = `<input type="hidden" name="id" value="` + f.id + "." + action + `">`
	}
	return `<form method="post" action="` + html.EscapeString(p.Path+"/"+action+f.query) + `"` + class + `><input type="hidden" name="csrf" value="` +
		f.csrf + `"><input type="hidden" name="room" value="` + room + `">` + id
}

// roomSection is one room: its numbers, live values and their form, its
// controls, and its charts.
func (p *Panel) roomSection(b *strings.Builder, i int, base *queue.Room, rd reading, f forms) {
	id := roomAnchor(i)
	name := html.EscapeString(base.Name)
	st := rd.stats
	b.WriteString(`<section id="` + id + `" aria-labelledby="` + id + `-h"><h2 id="` + id + `-h">Room ` + name + `</h2>`)
	if rd.err != nil {
		b.WriteString(`<p class="error">The store did not answer: ` + html.EscapeString(rd.err.Error()) + `. The controls below may fail too.</p>`)
	} else {
		if note := eventNote(base, st.Event, p.Now); note != "" {
			b.WriteString("<p>" + html.EscapeString(note) + "</p>")
		}
		stateNumbers(b, st)
		limitsTable(b, st)
	}
	for _, a := range control.Actions() {
		p.actionForm(b, a, id, name, f)
	}

	historySection(b, id, rd)
	b.WriteString("</section>")
}

// actionForm is a's form for the room of section id and (escaped)
// name, as its control.Form describes it.
func (p *Panel) actionForm(b *strings.Builder, a control.Action, id, name string, f forms) {
	fm := a.Form
	if fm.Heading != "" {
		b.WriteString("<h3>" + fm.Heading + "</h3>")
	}
	described := ""
	if fm.Intro != "" {
		hint := id + "-" + a.Name + "-hint"
		described = ` aria-describedby="` + hint + `"`
		b.WriteString(`<p class="hint" id="` + hint + `">` + strings.ReplaceAll(fm.Intro, "{room}", "<strong>"+name+"</strong>") + "</p>")
	}
	var fields []string
	for _, fd := range a.Fields {
		input := id + "-" + fd.Name
		ctl := `<input id="` + input + `" name="` + fd.Name + `"`
		if fd.Kind == control.Whole || fd.Kind == control.Number {
			ctl += ` type="number"`
		}
		if fd.Attrs != "" {
			ctl += " " + fd.Attrs
		}
		if fd.Required != "" {
			ctl += " required"
		}
		ctl += described + ">"
		if fd.Kind == control.Choice {
			ctl = `<select id="` + input + `" name="` + fd.Name + `">`
			if fd.Required == "" {
				ctl += `<option value="">as it is</option>`
			}
			for _, c := range fd.Choices {
				ctl += `<option>` + html.EscapeString(c) + `</option>`
			}
			ctl += "</select>"
		}
		label := `<label for="` + input + `">` + fd.Label + `</label>`
		if fm.Legend != "" {
			fields = append(fields, `<span class="field">`+label+ctl+`</span>`)
		} else {
			fields = append(fields, label+" "+ctl)
		}
	}
	b.WriteString(f.open(p, a.Name, name, ""))
	if fm.Legend != "" {
		b.WriteString("<fieldset><legend>" + fm.Legend + "</legend>" + strings.Join(fields, ""))
	} else {
		b.WriteString(strings.Join(fields, " "))
	}
	if len(fields) > 0 {
		b.WriteString(" ")
	}
	b.WriteString("<button")
	if fm.Danger {
		b.WriteString(` class="danger"`)
	}
	b.WriteString(">" + fm.Button)
	if fm.For != "" {
		b.WriteString(`<span class="vh"> ` + fm.For + " " + name + "</span>")
	} else {
		b.WriteString(" " + name)
	}
	b.WriteString("</button>")
	if fm.Legend != "" {
		b.WriteString("</fieldset>")
	}
	b.WriteString("</form>")
	if fm.Hint != "" {
		b.WriteString(`<p class="hint">` + fm.Hint + "</p>")
	}
}

// historySection is the room's charts: the last hour, the last day.
func historySection(b *strings.Builder, id string, rd reading) {
	if rd.err != nil {
		b.WriteString(`<h3>History</h3><p class="error">The history could not be read: ` + html.EscapeString(rd.err.Error()) + `</p>`)
		return
	}
	hour, day := historyCharts(id, rd.points)
	for _, part := range []struct {
		title  string
		charts []Chart
	}{{"The last hour", hour}, {"The last 24 hours", day}} {
		b.WriteString("<h3>" + part.title + `</h3><div class="charts">`)
		for _, c := range part.charts {
			b.WriteString(c.HTML())
		}
		b.WriteString("</div>")
	}
}

// stateNumbers is the room's numbers now, as control.Stats reads them.
func stateNumbers(b *strings.Builder, st control.Stats) {
	active := strconv.FormatInt(st.ActiveSessions, 10)
	if st.MaxSessions > 0 {
		active += " of " + strconv.Itoa(st.MaxSessions)
	} else {
		active += " (no cap)"
	}
	waits := "nobody was called in the last 5 minutes"
	if st.AvgWaitSeconds != nil {
		waits = "average " + duration(st.AvgWaitSeconds) + ", median " + duration(st.P50WaitSeconds) + ", p90 " + duration(st.P90WaitSeconds)
	}
	eta := "unknown: nobody was admitted lately"
	if st.ETALastInLineSeconds != nil {
		eta = duration(st.ETALastInLineSeconds)
	}
	b.WriteString("<h3>Now</h3><dl>")
	for _, kv := range [][2]string{
		{"State", state(st)},
		{"Mode", st.Mode},
		{"Active sessions", active},
		{"Waiting", strconv.FormatInt(st.QueueLength, 10)},
		{"Called, not yet arrived", strconv.FormatInt(st.Called, 10)},
		{"Now serving", strconv.FormatInt(st.NowServing, 10) + " of " + strconv.FormatInt(st.Issued, 10) + " tickets issued"},
		{"Admitted in the last minute", strconv.FormatInt(st.AdmittedLastMinute, 10)},
		{"Sent to the decoy line in the last minute (this POP)", decoyed(st.DecoyedLastMinute)},
		{"Wait of those called in the last 5 minutes", waits},
		{"Wait of the last in line (estimate)", eta},
		{"Line epoch", strconv.FormatInt(st.Epoch, 10)},
		{"Store latency of this reading", strconv.FormatFloat(math.Round(st.StoreLatencyMS*10)/10, 'f', -1, 64) + " ms"},
	} {
		b.WriteString("<dt>" + kv[0] + "</dt><dd>" + html.EscapeString(kv[1]) + "</dd>")
	}
	b.WriteString("</dl>")
}

// limitColumns are the limits table's columns.
var limitColumns = []string{"Setting", "Configured", "Live override", "In force"}

// limitsTable shows each live value beside its configured one.
func limitsTable(b *strings.Builder, st control.Stats) {
	b.WriteString(`<table class="cards limits"><caption>Limits: configured and live</caption>`)
	tableHead(b, limitColumns)
	b.WriteString("<tbody>")
	row := func(setting string, cfg, live, eff string) {
		b.WriteString(`<tr><th scope="row">` + setting + "</th><td>" + html.EscapeString(cfg) + "</td><td>" + html.EscapeString(live) +
			"</td><td>" + html.EscapeString(eff) + "</td></tr>")
	}
	over := func(s string, set bool) string {
		if !set {
			return "not set"
		}
		return s
	}
	c, o, e := st.Configured, st.Overrides, st.Effective
	row("Capacity (max_active_users)", intLimit(c.MaxActiveUsers), over(intLimit(o.MaxActiveUsers), o.MaxActiveUsers != nil), intLimit(e.MaxActiveUsers))
	row("Rate (new_users_per_minute)", floatLimit(c.NewUsersPerMinute), over(floatLimit(o.NewUsersPerMinute), o.NewUsersPerMinute != nil), floatLimit(e.NewUsersPerMinute))
	row("Burst", intValue(c.Burst), over(intValue(o.Burst), o.Burst != nil), intValue(e.Burst))
	row("Mode", stringValue(c.Mode), over(stringValue(o.Mode), o.Mode != nil), stringValue(e.Mode))
	b.WriteString("</tbody></table>")
}

func state(st control.Stats) string {
	switch {
	case st.QueueAll:
		return "queueing all"
	case st.Paused:
		return "paused"
	}
	return "admitting"
}

// intLimit and floatLimit show a capacity or a rate, where 0 is none.
func intLimit(v *int) string {
	if v == nil {
		return "?"
	}
	if *v == 0 {
		return "none"
	}
	return strconv.Itoa(*v)
}

func floatLimit(v *float64) string {
	if v == nil {
		return "?"
	}
	if *v == 0 {
		return "none"
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

func intValue(v *int) string {
	if v == nil {
		return "?"
	}
	return strconv.Itoa(*v)
}

func stringValue(v *string) string {
	if v == nil {
		return "?"
	}
	return *v
}

// duration is a number of seconds as a person reads it.
func duration(s *float64) string {
	if s == nil {
		return "none"
	}
	d := time.Duration(math.Round(*s)) * time.Second
	switch {
	case *s < 60:
		return strconv.FormatFloat(math.Round(*s*10)/10, 'f', -1, 64) + " s"
	case d < time.Hour:
		return fmt.Sprintf("%d min %d s", d/time.Minute, d%time.Minute/time.Second)
	}
	return fmt.Sprintf("%d h %d min", d/time.Hour, d%time.Hour/time.Minute)
}

// decoyed says how many requests were decoyed, or that they were not
// counted.
func decoyed(n *int64) string {
	if n == nil {
		return "not counted"
	}
	return strconv.FormatInt(*n, 10)
}
