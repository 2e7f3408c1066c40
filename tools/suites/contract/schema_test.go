package contract

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/edgequeue/waitingroom/tools/schemas"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// docURL names the document for the schema compiler; nothing is fetched.
const docURL = "https://waitingroom.test/visitor.schema.json"

// schema is the document, compiled, and the states the tests met.
type schema struct {
	root   *jsonschema.Schema
	states map[string]state

	mu   sync.Mutex
	seen map[string]bool
}

// state is what the document says of one state beside its body's schema.
type state struct {
	Status     []int `json:"x-status"`
	RetryAfter bool  `json:"x-retry-after"`
}

func loadSchema(t *testing.T) *schema {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "visitor.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs  map[string]state `json:"$defs"`
		OneOf []struct {
			Ref string `json:"$ref"`
		} `json:"oneOf"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("visitor.schema.json: %v", err)
	}
	c, err := schemas.Compiler(docURL, raw)
	if err != nil {
		t.Fatal(err)
	}
	root, err := c.Compile(docURL)
	if err != nil {
		t.Fatalf("visitor.schema.json: %v", err)
	}
	s := &schema{root: root, states: map[string]state{}, seen: map[string]bool{}}
	for _, o := range doc.OneOf {
		name := filepath.Base(o.Ref)
		st := doc.Defs[name]
		if len(st.Status) == 0 {
			t.Fatalf("state %s has no x-status", name)
		}
		s.states[name] = st
	}
	return s
}

// check holds an edge answer to the document: its body matches the
// schema, and its status code, headers and Retry-After the state's.
func (s *schema) check(t *testing.T, a answer) answer {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(a.body))
	if err == nil {
		err = s.root.Validate(inst)
	}
	if err != nil {
		t.Fatalf("%s: does not match visitor.schema.json: %v", a, err)
	}
	var body struct {
		Status            string `json:"status"`
		RetryAfterSeconds *int   `json:"retry_after_seconds"`
	}
	json.Unmarshal(a.body, &body)
	st := s.states[body.Status]
	if !slices.Contains(st.Status, a.status) {
		t.Errorf("%s: status code %d, the document says %v", a, a.status, st.Status)
	}
	if ct := a.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q", a, ct)
	}
	if cc := a.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("%s: Cache-Control %q", a, cc)
	}
	if ra := a.header.Get("Retry-After"); st.RetryAfter && (body.RetryAfterSeconds == nil || ra != strconv.Itoa(*body.RetryAfterSeconds)) {
		t.Errorf("%s: Retry-After %q, retry_after_seconds %v", a, ra, body.RetryAfterSeconds)
	}
	s.mu.Lock()
	s.seen[body.Status] = true
	s.mu.Unlock()
	a.state = body.Status
	return a
}

// covered fails the test for each documented state the tests never met.
func (s *schema) covered(t *testing.T) {
	t.Helper()
	for name := range s.states {
		if !s.seen[name] {
			t.Errorf("state %q of the document was never met", name)
		}
	}
}

// answer is one answer of the edge.
type answer struct {
	target string
	status int
	header http.Header
	body   []byte
	// state is the body's status, once checked.
	state string
}

func (a answer) String() string {
	b := string(a.body)
	if len(b) > 300 {
		b = b[:300] + "…"
	}
	return a.target + ": " + strconv.Itoa(a.status) + " " + b
}
