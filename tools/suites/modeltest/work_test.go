package modeltest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/tools/resp"
)

// workBound is the most Redis time one call may take on a long line: far
// above what a call that does bounded work takes (a sweep of 10,000
// entries is a few milliseconds), far below what a call that walks a
// line of 200,000 takes.
const workBound = 50 * time.Millisecond

// TestBoundedWork checks spec 10 where it shows: on a long line, no call
// runs the script for more than workBound of Redis time, not the call
// whose line time passes every ticket's queue timeout at once, nor a reset
// that voids them all. It needs a line of MODELTEST_LARGE tickets, built by
// joins (200000 makes the point, in about a minute), so it is skipped
// unless that is set: the model's sequences keep to short lines, where
// every call is cheap and a time bound would only measure the machine.
func TestBoundedWork(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("MODELTEST_LARGE"))
	if n <= 0 {
		t.Skip("set MODELTEST_LARGE to a number of tickets (e.g. 200000) to check a long line's calls")
	}
	e := newEnv(t)
	rc, err := resp.Dial(e.redis, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	p := basePolicy(0, 0, 1, 0.5)
	measure := func(room, what string, now time.Time, a store.Action) {
		t.Helper()
		before := scriptTime(t, rc)
		var err error
		if a.Op == "" {
			_, err = e.st.Stats(ctx, room, p, now)
		} else {
			_, err = e.st.Operate(ctx, room, p, a, now)
		}
		if err != nil {
			t.Fatal(err)
		}
		if d := scriptTime(t, rc) - before; d > workBound {
			t.Errorf("%s: %v of Redis time, want at most %v", what, d, workBound)
		} else {
			t.Logf("%s: %v of Redis time", what, d)
		}
	}

	// Every ticket lapses together: someone calls every 5 s (line time
	// keeps up) while the line, paused, waits and nobody polls.
	long(t, e, p, "lapse", n)
	for i := 1; i <= 20; i++ {
		at := t0.Add(time.Duration(5*i) * time.Second)
		measure("lapse", fmt.Sprintf("a call at %s", clock(at.UnixMilli())), at, store.Action{})
	}
	// A reset voids them all.
	long(t, e, p, "reset", n)
	measure("reset", "the reset", t0.Add(time.Second), store.Action{Op: store.OpReset, Actor: store.Actor{Via: "api"}})
}

// long fills room with n waiting tickets at t0, paused so none is called.
func long(t *testing.T, e *env, p store.Policy, room string, n int) {
	t.Helper()
	if _, err := e.st.Operate(ctx, room, p, store.Action{Op: string(store.Pause), Actor: store.Actor{Via: "api"}}, t0); err != nil {
		t.Fatal(err)
	}
	// Straight to the stand-in, without a socket: twice as fast.
	st := e.client("http://upstash", direct{e.srv})
	start := time.Now()
	const workers = 8
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				if _, err := st.Join(ctx, room, p, store.Arrival{ID: fmt.Sprint("a", i)}, t0); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d tickets joined in %v", room, n, time.Since(start).Round(time.Millisecond))
}

// direct hands the store's requests to a handler in process.
type direct struct{ h http.Handler }

func (d direct) RoundTrip(ctx context.Context, req store.Request) (store.Response, error) {
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(req.Body))
	for k, v := range req.Header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	d.h.ServeHTTP(w, r)
	return store.Response{Status: w.Code, Body: w.Body.Bytes()}, nil
}

// scriptTime is the Redis time spent in scripts so far (INFO
// commandstats: EVAL and EVALSHA, each counting its script's commands).
func scriptTime(t *testing.T, rc *resp.Conn) time.Duration {
	t.Helper()
	v, err := rc.Do("INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	var usec int64
	for _, line := range strings.Split(v.Str, "\n") {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "cmdstat_eval" && name != "cmdstat_evalsha") {
			continue
		}
		for _, f := range strings.Split(stats, ",") {
			if k, val, _ := strings.Cut(f, "="); k == "usec" {
				n, _ := strconv.ParseInt(val, 10, 64)
				usec += n
			}
		}
	}
	return time.Duration(usec) * time.Microsecond
}
