package store

import (
	"context"
	"crypto/sha1"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// replay answers each request with the next canned response and records
// the commands it was sent.
type replay struct {
	answers []Response
	err     error
	sent    [][]string
	headers []map[string]string
}

func (r *replay) RoundTrip(ctx context.Context, req Request) (Response, error) {
	var cmd []string
	json.Unmarshal(req.Body, &cmd)
	r.sent = append(r.sent, cmd)
	r.headers = append(r.headers, req.Header)
	if r.err != nil {
		return Response{}, r.err
	}
	a := r.answers[0]
	r.answers = r.answers[1:]
	return a, nil
}

func TestUpstashProtocol(t *testing.T) {
	ok := Response{Status: 200, Body: []byte(`{"result":[1700000000000,5,3,2,5,1,7,1,12,1699999999000,2,5,5,0,3,2,0,0,0,0,"",-1,-1,-1,0]}`)}
	tests := []struct {
		name     string
		answers  []Response
		err      error
		wantErr  error
		wantCmds []string
	}{
		{"evalsha", []Response{ok}, nil, nil, []string{"EVALSHA"}},
		{"noscript falls back to eval", []Response{{Status: 400, Body: []byte(`{"error":"NOSCRIPT No matching script. Please use EVAL."}`)}, ok}, nil, nil, []string{"EVALSHA", "EVAL"}},
		{"unauthorized", []Response{{Status: 401, Body: []byte(`{"error":"Unauthorized"}`)}}, nil, ErrUnauthorized, []string{"EVALSHA"}},
		{"server error", []Response{{Status: 502, Body: []byte(`{"error":"Redis unavailable"}`)}}, nil, ErrUnavailable, []string{"EVALSHA"}},
		{"html error page", []Response{{Status: 503, Body: []byte(`<html>`)}}, nil, ErrUnavailable, []string{"EVALSHA"}},
		{"throttled", []Response{{Status: 429, Body: nil}}, nil, ErrUnavailable, []string{"EVALSHA"}},
		{"transport", nil, errors.New("connection refused"), ErrUnavailable, []string{"EVALSHA"}},
		{"script error", []Response{{Status: 400, Body: []byte(`{"error":"ERR line: bad arguments"}`)}}, nil, ErrRejected, []string{"EVALSHA"}},
		{"garbage", []Response{{Status: 200, Body: []byte(`nonsense`)}}, nil, ErrProtocol, []string{"EVALSHA"}},
		{"short reply", []Response{{Status: 200, Body: []byte(`{"result":[1,2,3,4,5]}`)}}, nil, ErrProtocol, []string{"EVALSHA"}},
		{"string reply", []Response{{Status: 200, Body: []byte(`{"result":"OK"}`)}}, nil, ErrProtocol, []string{"EVALSHA"}},
		{"redirect", []Response{{Status: 302, Body: nil}}, nil, ErrProtocol, []string{"EVALSHA"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := &replay{answers: tc.answers, err: tc.err}
			u := &Upstash{URL: "https://db.test/", Token: "tok", Transport: tr}
			p := Policy{PerMinute: 60, Burst: 2, Capacity: 9, ClaimWindow: 30 * time.Second, SessionTTL: time.Minute, QueueTimeout: 15 * time.Minute,
				CatchUp: 20 * time.Second, FailedAt: time.UnixMilli(1699999990000)}
			pl, err := u.Join(context.Background(), "shop", p, Arrival{ID: "arrival"}, time.UnixMilli(1700000000123))
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if tc.err != nil && !errors.Is(err, tc.err) {
				t.Fatalf("error %v does not wrap the transport's %v", err, tc.err)
			}
			if len(tr.sent) != len(tc.wantCmds) {
				t.Fatalf("sent %d commands, want %v", len(tr.sent), tc.wantCmds)
			}
			for i, c := range tr.sent {
				if c[0] != tc.wantCmds[i] {
					t.Fatalf("command %d is %s, want %s", i, c[0], tc.wantCmds[i])
				}
				// The keys; the header (op, now, rate, burst, capacity, claim,
				// session, queue, window, catch-up, heartbeat, share,
				// mode, random key, event name, pre-queue, start, end, draw
				// key, refused, shard, shards, failed at); join's tail (the
				// arrival).
				want := []string{"11", "wr:{shop}:line", "wr:{shop}:sessions", "wr:{shop}:called", "wr:{shop}:waiting",
					"wr:{shop}:arrivals", "wr:{shop}:ended", "wr:{shop}:windows", "wr:{shop}:invites", "wr:{shop}:history", "wr:{shop}:audit",
					"wr:{shop}:events",
					"join", "1700000000123", "60", "2", "9", "30000", "60000", "900000", "0", "20000", "0", "0",
					"fifo", "", "", "0", "0", "0", "", "0", "0", "1", "1699999990000",
					"arrival"}
				if len(c) != 2+len(want) {
					t.Fatalf("command %q has %d arguments, want %d", c, len(c)-2, len(want))
				}
				for j, a := range want {
					if c[2+j] != a {
						t.Fatalf("argument %d is %q, want %q", j, c[2+j], a)
					}
				}
				if tr.headers[i]["Authorization"] != "Bearer tok" {
					t.Fatalf("auth header %q", tr.headers[i]["Authorization"])
				}
			}
			want := Place{Ticket: 5, Outcome: Admitted, Session: "1700000000000.5", CallFrom: 5, CallTo: 5,
				Line: Line{Epoch: 1700000000000, Issued: 5, Admitted: 3, QueueAll: true,
					Active: 7, Called: 1, Recent: 12, RecentSince: time.UnixMilli(1699999999000), CalledNow: 2,
					PriorityIssued: 3, PriorityAdmitted: 2}}
			if err == nil && pl != want {
				t.Fatalf("place %+v, want %+v", pl, want)
			}
		})
	}
}

// TestScriptSHA checks the name EVALSHA sends against a digest of the
// embedded line.lua computed here, at run time: it fails when line.lua
// changes and lineproto.go was not generated again (go generate ./store).
// TinyGo 0.33 once compiled the package-level initializer that held it into
// 40 NUL bytes; every operation then cost a NOSCRIPT answer and an EVAL. The
// test runs natively, in Go's wasm and under `tinygo test`.
func TestScriptSHA(t *testing.T) {
	h := sha1.New()
	for rest := lineScript; rest != ""; {
		n := min(len(rest), 997)
		io.WriteString(h, rest[:n])
		rest = rest[n:]
	}
	want := fmt.Sprintf("%x", h.Sum(nil))
	if len(lineScript) < 1000 || len(want) != 40 || strings.Trim(want, "0") == "" {
		t.Fatalf("script of %d bytes, digest %q: the embedded script or the digest is wrong", len(lineScript), want)
	}
	if lineScriptSHA != want {
		t.Fatalf("lineScriptSHA is %q, line.lua's SHA-1 is %q: run go generate ./store", lineScriptSHA, want)
	}
	tr := &replay{answers: []Response{{Status: 200, Body: []byte(`{"result":[1,1,1,0,1,1,1,0,1,1,1,1,1,0,0,0,0,0,0,0,"",-1,-1,-1,0]}`)}}}
	u := &Upstash{URL: "https://db.test/", Token: "tok", Transport: tr}
	if _, err := u.Join(context.Background(), "shop", Policy{Capacity: 1}, Arrival{ID: "sid"}, time.UnixMilli(1)); err != nil {
		t.Fatal(err)
	}
	if len(tr.sent) != 1 || len(tr.sent[0]) < 2 || tr.sent[0][0] != "EVALSHA" || tr.sent[0][1] != want {
		t.Fatalf("sent %q, want one EVALSHA %s", tr.sent, want)
	}
}

func TestSessionIDs(t *testing.T) {
	tests := []struct {
		id            string
		epoch, ticket int64
		ok            bool
	}{
		{"1700000000000.42", 1700000000000, 42, true},
		{"1.1", 1, 1, true},
		{"", 0, 0, false},
		{"1700000000000", 0, 0, false},
		{"1700000000000.", 0, 0, false},
		{".42", 0, 0, false},
		{"1700000000000.0", 0, 0, false},
		{"1700000000000.-4", 1700000000000, -4, true}, // the priority lane's
		{"1700000000000.-0", 0, 0, false},
		{"1700000000000.-04", 0, 0, false},
		{"1700000000000.--4", 0, 0, false},
		{"1700000000000.+4", 0, 0, false},
		{"1700000000000.042", 0, 0, false},
		{"1700000000000.4.2", 0, 0, false},
		{"17e11.42", 0, 0, false},
		{"9f86d081884c7d659a2feaa0c55ad015", 0, 0, false},
		{"1700000000000.99999999999999999999", 0, 0, false},
	}
	for _, tc := range tests {
		epoch, ticket, ok := parseSession(tc.id)
		if epoch != tc.epoch || ticket != tc.ticket || ok != tc.ok {
			t.Errorf("parseSession(%q) = %d, %d, %v; want %d, %d, %v", tc.id, epoch, ticket, ok, tc.epoch, tc.ticket, tc.ok)
		}
		if tc.ok && sessionID(epoch, ticket) != tc.id {
			t.Errorf("sessionID(%d, %d) = %q, want %q", epoch, ticket, sessionID(epoch, ticket), tc.id)
		}
	}
}

// TestSessionArguments checks what Renew and End send for a session: its
// ticket and line, the latest failure the caller saw (the POP's,
// Policy.FailedAt, or the holder's failed renewal, whichever is later) in
// the header, and when its pass stops admitting (end); a session id of
// another line or not of this store's making names no ticket.
func TestSessionArguments(t *testing.T) {
	until := time.UnixMilli(1700000020000)
	tests := []struct {
		name   string
		ref    SessionRef
		popAt  time.Time // Policy.FailedAt
		ticket string
		epoch  string
		failed string
		until  string
	}{
		{"live", SessionRef{ID: "1700000000000.42", Epoch: 1700000000000, UsableUntil: until}, time.Time{}, "42", "1700000000000", "0", "1700000020000"},
		{"other line", SessionRef{ID: "1700000000000.42", Epoch: 1800000000000, UsableUntil: until}, time.Time{}, "0", "0", "0", "1700000020000"},
		{"not ours", SessionRef{ID: "3f9a0c", Epoch: 1700000000000, UsableUntil: until}, time.Time{}, "0", "0", "0", "1700000020000"},
		{"no pass", SessionRef{ID: "1700000000000.42", Epoch: 1700000000000}, time.Time{}, "42", "1700000000000", "0", "0"},
		{"renewal failed", SessionRef{ID: "1700000000000.42", Epoch: 1700000000000, UsableUntil: until, FailedAt: time.UnixMilli(1700000005000)},
			time.Time{}, "42", "1700000000000", "1700000005000", "1700000020000"},
		{"the POP saw a failure", SessionRef{ID: "1700000000000.42", Epoch: 1700000000000, UsableUntil: until},
			time.UnixMilli(1700000007000), "42", "1700000000000", "1700000007000", "1700000020000"},
		{"the POP's failure is later", SessionRef{ID: "1700000000000.42", Epoch: 1700000000000, UsableUntil: until, FailedAt: time.UnixMilli(1700000005000)},
			time.UnixMilli(1700000007000), "42", "1700000000000", "1700000007000", "1700000020000"},
		{"the renewal's failure is later", SessionRef{ID: "1700000000000.42", Epoch: 1700000000000, UsableUntil: until, FailedAt: time.UnixMilli(1700000008000)},
			time.UnixMilli(1700000007000), "42", "1700000000000", "1700000008000", "1700000020000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok := Response{Status: 200, Body: []byte(`{"result":[1700000000000,50,45,0,0,1,7,0,12,1699999999000,0,0,0,0,0,0,0,0,0,0,"",-1,-1,-1,0]}`)}
			tr := &replay{answers: []Response{ok, ok}}
			u := &Upstash{URL: "https://db.test/", Token: "tok", Transport: tr}
			p := Policy{FailedAt: tc.popAt}
			if _, _, err := u.Renew(context.Background(), "shop", p, tc.ref, time.UnixMilli(1700000010000)); err != nil {
				t.Fatal(err)
			}
			if _, err := u.End(context.Background(), "shop", p, tc.ref, time.UnixMilli(1700000010000)); err != nil {
				t.Fatal(err)
			}
			// EVALSHA sha 11 keys... the header (op first, failed_at
			// last, 23 in all), then the tail: ticket, epoch, and
			// usable_until (end).
			for i, want := range [][]string{{"renew", tc.failed, tc.ticket, tc.epoch}, {"end", tc.failed, tc.ticket, tc.epoch, tc.until}} {
				c := tr.sent[i]
				if n := 3 + 11 + 23 + len(want) - 2; len(c) != n {
					t.Fatalf("%s sent %d values, want %d", want[0], len(c), n)
				}
				got := append([]string{c[14]}, c[36:]...)
				if strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("%s sent op, failed_at and its tail %q, want %q", want[0], got, want)
				}
			}
		})
	}
}

// TestRefusedBeforeSending checks the requests the store refuses without
// a round trip: admissions above what one script call may do, and arrival
// ids the script would refuse.
func TestRefusedBeforeSending(t *testing.T) {
	tests := []struct {
		name string
		do   func(u *Upstash) error
	}{
		{"admit above the bound", func(u *Upstash) error {
			_, err := u.Admit(context.Background(), "shop", Policy{}, MaxCallsPerOp+1, time.UnixMilli(1))
			return err
		}},
		{"admit a million", func(u *Upstash) error {
			_, err := u.Admit(context.Background(), "shop", Policy{}, 1000000, time.UnixMilli(1))
			return err
		}},
		{"admit fewer than none", func(u *Upstash) error {
			_, err := u.Admit(context.Background(), "shop", Policy{}, -1, time.UnixMilli(1))
			return err
		}},
		{"join without an arrival", func(u *Upstash) error {
			_, err := u.Join(context.Background(), "shop", Policy{}, Arrival{}, time.UnixMilli(1))
			return err
		}},
		{"join with a long arrival", func(u *Upstash) error {
			_, err := u.Join(context.Background(), "shop", Policy{}, Arrival{ID: strings.Repeat("a", maxArrival+1)}, time.UnixMilli(1))
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := &replay{}
			err := tc.do(&Upstash{URL: "https://db.test/", Token: "tok", Transport: tr})
			if !errors.Is(err, ErrRejected) {
				t.Fatalf("error %v, want ErrRejected", err)
			}
			if len(tr.sent) != 0 {
				t.Fatalf("sent %q, want nothing", tr.sent)
			}
		})
	}
}

// TestScriptIsPortable reads line.lua as Upstash would run it: every key it
// touches must be one passed in KEYS (Upstash's allow-key-locking refuses
// any other, and a key computed in the script stalls the whole database
// while it loads), and it must use none of the Lua libraries Upstash's own
// engine does not promise (bit, redis.sha1hex, cjson, cmsgpack, struct) nor
// a clock or randomness of its own.
func TestScriptIsPortable(t *testing.T) {
	if !strings.HasPrefix(lineScript, "#!lua flags=allow-key-locking\n") {
		t.Errorf("line.lua does not start with the allow-key-locking shebang")
	}
	for _, banned := range []string{"bit.", "sha1hex", "cjson", "cmsgpack", "struct.", "math.random", "'TIME'", "redis.setresp", "redis.replicate_commands"} {
		if strings.Contains(lineScript, banned) {
			t.Errorf("line.lua uses %q, which Upstash does not promise", banned)
		}
	}
	keys := map[string]bool{}
	const decl = "local line, sessions, called, waiting, arrivals, ended, windows, invites, history, audit, events =\n  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11]"
	if !strings.Contains(lineScript, decl) {
		t.Fatalf("line.lua does not name its keys as the test expects:\n%s", decl)
	}
	// key is the one parameter that holds a key: the sweep's loop over
	// floor's keys, and alive and count, which it serves.
	const floor = "local floor = { [sessions] = lt, [called] = lt, [waiting] = lt - queue_ms, [ended] = lt }"
	if !strings.Contains(lineScript, floor) {
		t.Fatalf("line.lua does not sweep the keys the test expects:\n%s", floor)
	}
	for _, k := range strings.Split("line sessions called waiting arrivals ended windows invites history audit events key", " ") {
		keys[k] = true
	}
	calls := 0
	for rest := lineScript; ; {
		i := strings.Index(rest, "redis.call(")
		if i < 0 {
			break
		}
		rest = rest[i+len("redis.call("):]
		args := strings.Split(rest[:strings.Index(rest, ")")], ",")
		cmd := strings.Trim(args[0], "' ")
		named := args[1:2]
		if cmd == "DEL" || cmd == "UNLINK" {
			named = args[1:]
		}
		for _, a := range named {
			if a = strings.TrimSpace(a); !keys[a] {
				t.Errorf("redis.call('%s', %s, ...): the key is not one of KEYS", cmd, a)
			}
		}
		calls++
	}
	if calls < 20 || strings.Contains(lineScript, "redis.pcall(") {
		t.Errorf("found %d redis.call and some redis.pcall: the scan no longer matches the script", calls)
	}
}

// TestScriptAgreesWithClient: the bounds the client checks before sending
// are the ones the script enforces.
func TestScriptAgreesWithClient(t *testing.T) {
	for _, want := range []string{
		fmt.Sprintf("local MAX_CALLS = %d\n", MaxCallsPerOp),
		fmt.Sprintf("#arrival > %d", maxArrival),
		fmt.Sprintf("#invite > %d", maxArrival),
		fmt.Sprintf("local MAX_USES = %d\n", MaxInviteUses),
		fmt.Sprintf("if #KEYS ~= %d then", len((&Upstash{}).Keys("r"))),
		fmt.Sprintf("local AUDIT_CAP, DAY = %d, %d\n", AuditCap, HistoryMinutes),
	} {
		if !strings.Contains(lineScript, want) {
			t.Errorf("line.lua does not contain %q", want)
		}
	}
}
