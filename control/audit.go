package control

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"

	"github.com/edgequeue/waitingroom/store"
)

// The merged audit log. Each room keeps its own log, newest first (the
// newest store.AuditCap entries); operators read them as one, newest
// first across the rooms. A page is a merge of the rooms' logs that reads
// a room only when its next entry could be the page's next, in rounds of
// one store call each (one call reads many rooms: store.Upstash.Audit),
// as many as the request's budget has left. The page's cursor says where
// each room's log stands, so a page costs the same however deep it is.

// AuditPage is a page of the merged audit log.
type AuditPage struct {
	// Entries are newest first.
	Entries []store.AuditEntry
	// Next is the cursor of the next page; "" when the log ends here.
	Next string
}

// Audit is a page of the audit log of every room, newest first: up to
// limit entries (1 to store.MaxAuditPage) after cursor, which is "" for
// the newest or the Next of the page before. It reads with the store
// calls the request has left; when the rooms' logs interleave so that
// they do not fill the page, it holds fewer than limit entries (even
// none) and Next goes on from where it stopped.
func (o *Operator) Audit(ctx context.Context, cursor string, limit int) (AuditPage, error) {
	if limit < 1 || limit > store.MaxAuditPage {
		return AuditPage{}, &InputError{"limit", fmt.Sprintf("must be from 1 to %d", store.MaxAuditPage)}
	}
	m, err := o.resume(cursor)
	if err != nil {
		return AuditPage{}, err
	}
	page := AuditPage{Entries: []store.AuditEntry{}}
	for len(page.Entries) < limit {
		head := m.head()
		need := m.blocking(head)
		if len(need) == 0 {
			if head < 0 {
				break // every log ends here
			}
			page.Entries = append(page.Entries, m.take(head))
			continue
		}
		if o.store().left() == 0 {
			break
		}
		// One more than the page has room for tells whether a log goes on.
		want := limit - len(page.Entries) + 1
		if err := m.read(ctx, m.ahead(need, want), want); err != nil {
			return AuditPage{}, err
		}
	}
	page.Next = m.cursor()
	if len(page.Entries) == 0 && page.Next == m.start {
		// Not one entry, not one step further: the rooms' next entries
		// cannot all be read with what the budget has left, now or on
		// the next page.
		o.logf("control: the audit logs of %d rooms do not fit in the %d store calls left to this request", len(o.Rooms), o.store().left())
		return AuditPage{}, fmt.Errorf("%w (%d): the audit logs of %d rooms need more to merge", ErrBudget, MaxStoreCalls, len(o.Rooms))
	}
	return page, nil
}

// auditKey is an entry's place in the merged log: newer first, and among
// those of the same millisecond, the room first in the config first.
type auditKey struct {
	ms   int64
	room int
}

// before reports whether k comes before l in the merged log.
func (k auditKey) before(l auditKey) bool { return k.ms > l.ms || k.ms == l.ms && k.room < l.room }

func keyOf(e store.AuditEntry, room int) auditKey { return auditKey{e.Time.UnixMilli(), room} }

// roomLog is where a page stands in one room's log.
type roomLog struct {
	// next is the position of the next entry to read.
	next int
	// read are the entries read and not on the page yet, at their
	// positions.
	read []readEntry
	// end: the log has nothing at next or after.
	end bool
	// last is the key of the last entry read, once one was: the log's
	// later entries are older.
	last    auditKey
	started bool
}

type readEntry struct {
	e   store.AuditEntry
	pos int
}

// merge is a page of the merged log being made.
type merge struct {
	o    *Operator
	logs []roomLog
	// given is the last entry of the pages before, if there were any
	// (resumed): an entry at or before it is one of theirs, moved down
	// its room's log by actions taken since. (A log is in the order its
	// actions reached the store, their times from the edges' clocks: two
	// actions on one room a few milliseconds apart from two POPs may be
	// out of order, and one of them then missed at a page's end.)
	given   auditKey
	resumed bool
	// last is the last entry on this page or those before (if any), for
	// the next.
	last    auditKey
	hasLast bool
	// start is the cursor the page began at, as cursor writes it.
	start string
}

// head is the room whose next entry read is the newest, or -1.
func (m *merge) head() int {
	head := -1
	for i, l := range m.logs {
		if len(l.read) > 0 && (head < 0 || keyOf(l.read[0].e, i).before(keyOf(m.logs[head].read[0].e, head))) {
			head = i
		}
	}
	return head
}

// blocking are the rooms to read before head's entry can go on the page:
// those with nothing read in hand whose log may hold an entry before it.
func (m *merge) blocking(head int) []int {
	var need []int
	for i, l := range m.logs {
		if l.end || len(l.read) > 0 {
			continue
		}
		if head >= 0 && l.started && keyOf(m.logs[head].read[0].e, head).before(l.last) {
			continue
		}
		need = append(need, i)
	}
	return need
}

// ahead is need and the other rooms whose next entries may come before
// the want-th entry in hand, so that one call reads what the page is
// likely to hold: with many rooms, a call reads few entries of each, and
// reading only the rooms that block would cost a call for every entry.
func (m *merge) ahead(need []int, want int) []int {
	var inHand []auditKey
	for i, l := range m.logs {
		for _, r := range l.read {
			inHand = append(inHand, keyOf(r.e, i))
		}
	}
	sort.Slice(inHand, func(a, b int) bool { return inHand[a].before(inHand[b]) })
	blocking := map[int]bool{}
	for _, i := range need {
		blocking[i] = true
	}
	for i, l := range m.logs {
		if !l.end && !blocking[i] && (len(inHand) < want || l.last.before(inHand[want-1])) {
			need = append(need, i)
		}
	}
	return need
}

// take puts room i's next entry on the page.
func (m *merge) take(i int) store.AuditEntry {
	l := &m.logs[i]
	e := l.read[0].e
	l.read = l.read[1:]
	m.last, m.hasLast = keyOf(e, i), true
	return e
}

// read reads the next entries of the rooms need, up to want each, in
// one store call; at most store.MaxAuditPage in all, so with many rooms
// one entry each of the first of them (those that block come first).
func (m *merge) read(ctx context.Context, need []int, want int) error {
	per := max(1, min(want, store.MaxAuditPage/len(need)))
	need = need[:min(len(need), store.MaxAuditPage/per)]
	reads := make([]store.AuditRead, len(need))
	for j, i := range need {
		reads[j] = store.AuditRead{Room: m.o.Rooms[i].Name, Offset: m.logs[i].next, Limit: per}
	}
	pages, err := m.o.store().Audit(ctx, reads)
	if err != nil {
		m.o.logf("control: reading the audit logs of %d rooms failed: %v", len(reads), err)
		return err
	}
	for j, i := range need {
		l, got := &m.logs[i], pages[j]
		for k, e := range got {
			if m.resumed && !m.given.before(keyOf(e, i)) {
				continue
			}
			l.read = append(l.read, readEntry{e, l.next + k})
		}
		if len(got) > 0 {
			l.last, l.started = keyOf(got[len(got)-1], i), true
		}
		l.next += len(got)
		l.end = len(got) < per || l.next >= store.AuditCap
	}
	return nil
}

// The cursor is the rooms' fingerprint, the last entry given ("x" for
// none) and where each room's log resumes, for those past their first
// entry, e.g. 9c3f0a1e.1772366400899-3.0-12_3-8_17-1000; store.AuditCap
// is a log read to its end. It is plain text, but opaque to clients: the
// API and the panel hand it out and take it back.

// cursor is where the next page starts, or "" when every log ends here.
func (m *merge) cursor() string {
	pos := make([]int, len(m.logs))
	more := false
	for i, l := range m.logs {
		switch {
		case len(l.read) > 0:
			pos[i], more = l.read[0].pos, true
		case l.end:
			pos[i] = store.AuditCap
		default:
			pos[i], more = l.next, true
		}
	}
	if !more {
		return ""
	}
	return m.encode(pos)
}

func (m *merge) encode(pos []int) string {
	var b strings.Builder
	b.WriteString(m.o.fingerprint() + ".")
	if m.hasLast {
		b.WriteString(strconv.FormatInt(m.last.ms, 10) + "-" + strconv.Itoa(m.last.room))
	} else {
		b.WriteString("x")
	}
	b.WriteString(".")
	sep := ""
	for i, p := range pos {
		if p > 0 {
			b.WriteString(sep + strconv.Itoa(i) + "-" + strconv.Itoa(p))
			sep = "_"
		}
	}
	return b.String()
}

// fingerprint names the configured rooms, in order: a cursor of other
// rooms' logs means nothing here.
func (o *Operator) fingerprint() string {
	h := fnv.New32a()
	for _, r := range o.Rooms {
		h.Write([]byte(r.Name + ","))
	}
	return fmt.Sprintf("%08x", h.Sum32())
}

// resume starts a page at cursor, or says what is wrong with it.
func (o *Operator) resume(cursor string) (*merge, error) {
	m := &merge{o: o, logs: make([]roomLog, len(o.Rooms))}
	if cursor == "" {
		m.start = m.encode(make([]int, len(o.Rooms)))
		return m, nil
	}
	bad := &InputError{"cursor", "is not one this audit log gave: take the next of the page before, or leave it out for the newest entries"}
	parts := strings.Split(cursor, ".")
	if len(parts) != 3 {
		return nil, bad
	}
	if parts[0] != o.fingerprint() {
		return nil, &InputError{"cursor", "was given for other rooms than are configured now: leave it out to start again from the newest entries"}
	}
	if parts[1] != "x" {
		ms, room, found := strings.Cut(parts[1], "-")
		t, err := strconv.ParseInt(ms, 10, 64)
		i, ok := index(room, len(o.Rooms)-1)
		if !found || err != nil || t < 0 || !ok {
			return nil, bad
		}
		m.given, m.resumed = auditKey{t, i}, true
		m.last, m.hasLast = m.given, true
	}
	pos := make([]int, len(o.Rooms))
	if parts[2] != "" {
		for _, f := range strings.Split(parts[2], "_") {
			room, p, found := strings.Cut(f, "-")
			i, ok1 := index(room, len(o.Rooms)-1)
			n, ok2 := index(p, store.AuditCap)
			if !found || !ok1 || !ok2 {
				return nil, bad
			}
			pos[i] = n
		}
	}
	// Only the cursor this code writes is taken: one way to write each.
	if m.encode(pos) != cursor {
		return nil, bad
	}
	for i, p := range pos {
		m.logs[i].next, m.logs[i].end = p, p >= store.AuditCap
	}
	m.start = cursor
	return m, nil
}

// index reads a whole number from 0 to most.
func index(s string, most int) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0 && n <= most
}
