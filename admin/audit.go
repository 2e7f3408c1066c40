package admin

import (
	"context"
	"html"
	"strconv"
	"strings"

	"github.com/edgequeue/waitingroom/store"
)

// auditPageSize is how many audit entries a page of the panel shows.
const auditPageSize = 20

// lastAuditPage is the last page the audit log can fill: every room keeps
// its last store.AuditCap entries.
func (p *Panel) lastAuditPage() int {
	return max(1, (len(p.Rooms)*store.AuditCap+auditPageSize-1)/auditPageSize)
}

// auditSection is a page of the audit log, newest first, with links to
// the newer and older pages.
func (p *Panel) auditSection(ctx context.Context, b *strings.Builder, v view) {
	b.WriteString(`<section id="audit" aria-labelledby="audit-h"><h2 id="audit-h">Audit log</h2>`)
	defer b.WriteString("</section>")
	// One entry more than a page tells whether there is an older page.
	entries, err := p.Op.Audit(ctx, (v.auditPage-1)*auditPageSize, auditPageSize+1)
	if err != nil {
		p.Logf("admin: reading the audit log failed: %v", err)
		b.WriteString(`<p class="error">The audit log could not be read: ` + html.EscapeString(err.Error()) + `</p>`)
		return
	}
	older := len(entries) > auditPageSize
	if older {
		entries = entries[:auditPageSize]
	}
	page := strconv.Itoa(v.auditPage)
	b.WriteString(`<p>Every action taken in the panel or through the API, newest first, ` + strconv.Itoa(auditPageSize) + ` to a page. This is page ` + page + `.</p>`)
	switch {
	case len(entries) == 0 && v.auditPage == 1:
		b.WriteString("<p>No operator actions are recorded yet.</p>")
	case len(entries) == 0:
		b.WriteString("<p>No entries on this page.</p>")
	default:
		b.WriteString(`<table><caption class="vh">Audit log, page ` + page + `</caption><thead><tr><th scope="col">Time (UTC)</th><th scope="col">Room</th>` +
			`<th scope="col">Action</th><th scope="col">By</th><th scope="col">Before</th><th scope="col">After (changes in bold)</th></tr></thead><tbody>`)
		for _, e := range entries {
			action := e.Action
			if e.N != 0 {
				action += " " + strconv.FormatInt(e.N, 10)
			}
			b.WriteString(`<tr><td><time datetime="` + e.Time.UTC().Format("2006-01-02T15:04:05Z") + `">` + e.Time.UTC().Format("2006-01-02 15:04:05") +
				"</time></td><td>" + html.EscapeString(e.Room) + "</td><td>" + html.EscapeString(action) + "</td><td>" + html.EscapeString(e.Via) +
				" <code>" + html.EscapeString(e.Client) + "</code></td><td>" + stateCell(e.Before, e.After, false) + "</td><td>" +
				stateCell(e.After, e.Before, true) + "</td></tr>")
		}
		b.WriteString("</tbody></table>")
	}
	if v.auditPage == 1 && !older {
		return
	}
	b.WriteString(`<nav aria-label="Audit log pages"><p>`)
	if v.auditPage > 1 {
		b.WriteString(`<a href="` + html.EscapeString(p.link(v.refreshOff, v.auditPage-1)+"#audit") + `" rel="prev">Newer entries</a> `)
	}
	if older {
		b.WriteString(`<a href="` + html.EscapeString(p.link(v.refreshOff, v.auditPage+1)+"#audit") + `" rel="next">Older entries</a>`)
	}
	b.WriteString("</p></nav>")
}

// stateCell describes a room's state in an audit entry: its line, and
// its live overrides where this state or the other has one. With mark,
// what differs from the other state is in bold.
func stateCell(s, other store.AuditState, mark bool) string {
	mine, theirs := auditParts(s), auditParts(other)
	var out []string
	for i, part := range mine {
		if part[1] == "" && theirs[i][1] == "" {
			continue // an override neither state has
		}
		text := part[0] + " " + part[1]
		if part[1] == "" {
			text = part[0] + " as configured"
		}
		text = html.EscapeString(text)
		if mark && part[1] != theirs[i][1] {
			text = "<strong>" + text + "</strong>"
		}
		out = append(out, text)
	}
	return strings.Join(out, ", ")
}

// auditParts is a state's parts in a fixed order, each a label and a
// value ("" for an override that is not set).
func auditParts(s store.AuditState) [][2]string {
	state := "admitting"
	switch {
	case s.QueueAll:
		state = "queueing all"
	case s.Paused:
		state = "paused"
	}
	parts := [][2]string{
		{"epoch", strconv.FormatInt(s.Epoch, 10)},
		{"issued", strconv.FormatInt(s.Issued, 10)},
		{"serving", strconv.FormatInt(s.Admitted, 10)},
		{"state", state},
		{"capacity", ""}, {"rate per minute", ""}, {"burst", ""},
		{"mode", string(s.Mode)},
	}
	if s.Capacity != nil {
		parts[4][1] = strconv.Itoa(*s.Capacity)
	}
	if s.PerMinute != nil {
		parts[5][1] = strconv.FormatFloat(*s.PerMinute, 'f', -1, 64)
	}
	if s.Burst != nil {
		parts[6][1] = strconv.Itoa(*s.Burst)
	}
	return parts
}
