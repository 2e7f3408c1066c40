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
	ok := Response{Status: 200, Body: []byte(`{"result":[1700000000000,5,3,2,5,1,7,1,12,1699999999000]}`)}
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
			p := Policy{PerMinute: 60, Burst: 2, Capacity: 9, ClaimWindow: 30 * time.Second, SessionTTL: time.Minute, QueueTimeout: 15 * time.Minute}
			pl, err := u.Join(context.Background(), "shop", p, "sid", time.UnixMilli(1700000000123))
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
				want := []string{"4", "wr:shop:line", "wr:shop:sessions", "wr:shop:called", "wr:shop:waiting",
					"join", "1700000000123", "60", "2", "9", "30000", "60000", "900000", "0", "sid", "0", "0", ""}
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
			want := Place{Ticket: 5, Outcome: Admitted, Line: Line{Epoch: 1700000000000, Issued: 5, Admitted: 3, QueueAll: true,
				Active: 7, Called: 1, Recent: 12, RecentSince: time.UnixMilli(1699999999000)}}
			if err == nil && pl != want {
				t.Fatalf("place %+v, want %+v", pl, want)
			}
		})
	}
}

// TestScriptSHA checks the name EVALSHA sends against a digest computed
// here by another route (streamed, formatted by fmt), at run time. TinyGo
// 0.33 once compiled the package-level initializer that held it into 40
// NUL bytes; every operation then cost a NOSCRIPT answer and an EVAL. The
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
	if got := scriptSHA(); got != want {
		t.Fatalf("scriptSHA() = %q, want %q", got, want)
	}
	tr := &replay{answers: []Response{{Status: 200, Body: []byte(`{"result":[1,1,1,0,1,1,1,0,1,1]}`)}}}
	u := &Upstash{URL: "https://db.test/", Token: "tok", Transport: tr}
	if _, err := u.Join(context.Background(), "shop", Policy{Capacity: 1}, "sid", time.UnixMilli(1)); err != nil {
		t.Fatal(err)
	}
	if len(tr.sent) != 1 || len(tr.sent[0]) < 2 || tr.sent[0][0] != "EVALSHA" || tr.sent[0][1] != want {
		t.Fatalf("sent %q, want one EVALSHA %s", tr.sent, want)
	}
}
