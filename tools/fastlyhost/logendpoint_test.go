package fastlyhost

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestLogEndpoints: entries come out as Viceroy prints them ("NAME ::
// entry", one trailing newline dropped, others escaped, empty entries
// dropped: its cli/tests/integration/logging.rs), and the names it
// reserves cannot be opened.
func TestLogEndpoints(t *testing.T) {
	wasm, err := guestWasm()
	if err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	srv, _ := serveHostWith(t, wasm, &Manifest{}, Options{Timeout: 30 * time.Second, LogEndpoints: out})
	tests := []struct {
		name, msg string
		want      string // what the endpoint writer receives
		wantErr   bool   // the guest's write fails
	}{
		{"inigo", "Who are you?", "inigo :: Who are you?\n", false},
		{"mib", "There is something\nI ought to tell you.", "mib :: There is something\\nI ought to tell you.\n", false},
		{"inigo", "Tell me.\n\n", "inigo :: Tell me.\\n\n", false},
		{"inigo", "\n", "", false},
		{"inigo", "O_O\n", "inigo :: O_O\n", false},
		{"wr_requests", `{"type":"request","status":200}`, "wr_requests :: {\"type\":\"request\",\"status\":200}\n", false},
		{"My Endpoint", "x", "My Endpoint :: x\n", false},
		{"stdout2", "x", "stdout2 :: x\n", false},
		{"stdout", "x", "", true},
		{"STDOUT", "x", "", true},
		{"stderr", "x", "", true},
		{"fst_managed_logs", "x", "", true},
		{"FST_Managed_x", "x", "", true},
	}
	for _, tc := range tests {
		before := len(out.String())
		_, body := get(t, srv.URL+"/log?name="+url.QueryEscape(tc.name)+"&msg="+url.QueryEscape(tc.msg), nil)
		if failed := body != "logged <nil>"; failed != tc.wantErr {
			t.Errorf("%s %q: the guest's write answered %q", tc.name, tc.msg, body)
		}
		if got := out.String()[before:]; got != tc.want {
			t.Errorf("%s %q: wrote %q, want %q", tc.name, tc.msg, got, tc.want)
		}
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestLogEndpointWriterFails: when the host cannot write an entry, the
// guest's write succeeds all the same (Viceroy's does) and the host's log
// says why.
func TestLogEndpointWriterFails(t *testing.T) {
	wasm, err := guestWasm()
	if err != nil {
		t.Fatal(err)
	}
	srv, logs := serveHostWith(t, wasm, &Manifest{}, Options{Timeout: 30 * time.Second, LogEndpoints: failingWriter{}})
	if _, body := get(t, srv.URL+"/log?name=events&msg=hi", nil); body != "logged <nil>" {
		t.Errorf("the guest's write answered %q", body)
	}
	if !strings.Contains(logs.String(), "log endpoint events: disk full") {
		t.Errorf("no log line says the entry was lost:\n%s", logs)
	}
}
