package admin

import (
	"context"
	"errors"
	"html"
	"strconv"
	"strings"

	"github.com/edgequeue/waitingroom/control"
	"github.com/edgequeue/waitingroom/store"
)

// auditPageSize is how many audit entries a page of the panel shows, at
// most: with many rooms, the calls left to read them may fill fewer.
const auditPageSize = 20

// auditColumns are the audit log's columns.
var auditColumns = []string{"Time (UTC)", "Room", "Action", "By", "Before", "After (changes in bold)"}

// auditSection is a page of the audit log of every room, newest first,
// read with what is left of the request's store calls, with links to
// the newest entries and to older ones. A cursor the panel did not give
// is returned, for the page to refuse.
func (p *Panel) auditSection(ctx context.Context, b *strings.Builder, v view) *control.InputError {
	b.WriteString(`<section id="audit" aria-labelledby="audit-h"><h2 id="audit-h">Audit log</h2>`)
	defer b.WriteString("</section>")
	page, err := p.Op.Audit(ctx, v.audit, auditPageSize)
	var bad *control.InputError
	if errors.As(err, &bad) {
		return bad
	}
	if err != nil {
		p.Logf("admin: reading the audit log failed: %v", err)
		b.WriteString(`<p class="error">The audit log could not be read: ` + html.EscapeString(err.Error()) + `</p>`)
		return nil
	}
	which := "newest entries"
	if v.audit != "" {
		which = "older entries"
	}
	b.WriteString(`<p>Every action taken in the panel or through the API, in every room, newest first, up to ` + strconv.Itoa(auditPageSize) + ` to a page. These are the ` + which + `.</p>`)
	switch {
	case len(page.Entries) == 0 && v.audit == "" && page.Next == "":
		b.WriteString("<p>No operator actions are recorded yet.</p>")
	case len(page.Entries) == 0:
		b.WriteString("<p>No entries on this page.</p>")
	default:
		b.WriteString(`<table class="cards"><caption class="vh">Audit log, ` + which + `</caption>`)
		tableHead(b, auditColumns)
		b.WriteString("<tbody>")
		for _, e := range page.Entries {
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
	if v.audit == "" && page.Next == "" {
		return nil
	}
	b.WriteString(`<nav aria-label="Audit log pages"><p>`)
	if v.audit != "" {
		newest := v
		newest.audit = ""
		b.WriteString(`<a href="` + html.EscapeString(p.link(newest)+"#audit") + `" rel="first">Newest entries</a> `)
	}
	if page.Next != "" {
		older := v
		older.audit = page.Next
		b.WriteString(`<a href="` + html.EscapeString(p.link(older)+"#audit") + `" rel="next">Older entries</a>`)
	}
	b.WriteString("</p></nav>")
	return nil
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
