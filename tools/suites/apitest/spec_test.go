package apitest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/edgequeue/waitingroom/tools/schemas"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// exchange is one request to the API and its answer.
type exchange struct {
	method string
	// path is below api_path, with the query.
	path   string
	sent   []byte
	status int
	header http.Header
	body   []byte
}

func (x exchange) String() string {
	body := string(x.body)
	if len(body) > 300 {
		body = body[:300] + "…"
	}
	return x.method + " " + x.path + ": " + strconv.Itoa(x.status) + " " + body
}

// docURL names the document for the schema compiler; nothing is fetched.
const docURL = "https://waitingroom.test/openapi.json"

// spec is the OpenAPI document, what it says of each route and answer,
// and which answers the tests have seen.
type spec struct {
	doc      map[string]any
	compiler *jsonschema.Compiler

	mu      sync.Mutex
	schemas map[string]*jsonschema.Schema // by JSON pointer
	seen    map[string]bool               // "METHOD /path status"
}

func newSpec(t *testing.T, raw []byte) *spec {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi.json is OpenAPI %v, want 3.1.0", doc["openapi"])
	}
	c, err := schemas.Compiler(docURL, raw)
	if err != nil {
		t.Fatal(err)
	}
	s := &spec{doc: doc, compiler: c, schemas: map[string]*jsonschema.Schema{}, seen: map[string]bool{}}
	// Every schema the document defines compiles.
	for name := range s.object(t, "components", "schemas") {
		s.schema(t, "/components/schemas/"+name)
	}
	return s
}

// object is the document's object at the keys, failing the test when
// there is none.
func (s *spec) object(t *testing.T, keys ...string) map[string]any {
	t.Helper()
	var v any = s.doc
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("openapi.json has no object at %q", keys)
	}
	return m
}

// resolve follows a $ref within the document: the keys of its target.
func (s *spec) resolve(t *testing.T, keys []string) []string {
	t.Helper()
	if ref, ok := s.object(t, keys...)["$ref"].(string); ok {
		return strings.Split(strings.TrimPrefix(ref, "#/"), "/")
	}
	return keys
}

// schema compiles the schema at a JSON pointer into the document.
func (s *spec) schema(t *testing.T, pointer string) *jsonschema.Schema {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.schemas[pointer]; ok {
		return sch
	}
	sch, err := s.compiler.Compile(docURL + "#" + pointer)
	if err != nil {
		t.Fatalf("schema %s: %v", pointer, err)
	}
	s.schemas[pointer] = sch
	return sch
}

// pointer is keys as a JSON pointer.
func pointer(keys []string) string {
	var b strings.Builder
	for _, k := range keys {
		b.WriteString("/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// template is the document's path that path (below api_path, without
// the query) is an instance of, or "".
func (s *spec) template(t *testing.T, path string) string {
	got := strings.Split(path, "/")
	for tmpl := range s.object(t, "paths") {
		want := strings.Split(tmpl, "/")
		if len(want) != len(got) {
			continue
		}
		match := true
		for i := range want {
			param := strings.HasPrefix(want[i], "{") && strings.HasSuffix(want[i], "}")
			match = match && (want[i] == got[i] || param && got[i] != "")
		}
		if match {
			return tmpl
		}
	}
	return ""
}

// validate checks body (JSON, or JSON lines) against the schema at keys.
func (s *spec) validate(t *testing.T, x exchange, what string, keys []string, body []byte, lines bool) {
	t.Helper()
	sch := s.schema(t, pointer(keys))
	docs := [][]byte{body}
	if lines {
		docs = bytes.Split(bytes.TrimSuffix(body, []byte("\n")), []byte("\n"))
		if len(body) == 0 {
			docs = nil
		}
	}
	for _, d := range docs {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(d))
		if err == nil {
			err = sch.Validate(inst)
		}
		if err != nil {
			t.Errorf("%s: the %s does not match the document's schema %s: %v", x, what, pointer(keys), err)
		}
	}
}

// check holds one exchange to the document: its route and method, its
// status among the route's answers, its content type, headers and body
// by the answer's schema, and the request body of a success by the
// request's. A path the document lacks must be 404 no_such_route, a
// method it lacks 405 with the document's methods in Allow.
func (s *spec) check(t *testing.T, x exchange) {
	t.Helper()
	if cc := x.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("%s: Cache-Control %q, want no-store", x, cc)
	}
	path, _, _ := strings.Cut(x.path, "?")
	tmpl := s.template(t, path)
	errorSchema := []string{"components", "schemas", "Error"}
	if tmpl == "" {
		if x.status != http.StatusNotFound || !bytes.Contains(x.body, []byte(`"no_such_route"`)) {
			t.Errorf("%s: a path the document lacks, answered other than 404 no_such_route", x)
		}
		s.validate(t, x, "answer", errorSchema, x.body, false)
		return
	}
	item := s.object(t, "paths", tmpl)
	method := strings.ToLower(x.method)
	if _, ok := item[method]; !ok {
		var allow []string
		for m := range item {
			if m != "parameters" {
				allow = append(allow, strings.ToUpper(m))
			}
		}
		got := strings.Split(x.header.Get("Allow"), ", ")
		sort.Strings(allow)
		sort.Strings(got)
		if x.status != http.StatusMethodNotAllowed || strings.Join(got, ",") != strings.Join(allow, ",") {
			t.Errorf("%s: a method the document lacks, answered other than 405 with Allow %v (Allow %q)", x, allow, x.header.Get("Allow"))
		}
		s.validate(t, x, "answer", errorSchema, x.body, false)
		return
	}
	status := strconv.Itoa(x.status)
	responses := s.object(t, "paths", tmpl, method, "responses")
	if _, ok := responses[status]; !ok {
		t.Errorf("%s: status %s is not among the document's answers for %s %s", x, status, x.method, tmpl)
		return
	}
	s.mu.Lock()
	s.seen[x.method+" "+tmpl+" "+status] = true
	s.mu.Unlock()
	resp := s.resolve(t, []string{"paths", tmpl, method, "responses", status})
	for name := range objectOr(s.doc, append(resp, "headers")) {
		if x.header.Get(name) == "" {
			t.Errorf("%s: no %s header, which the document promises", x, name)
		}
	}
	content := s.object(t, append(resp, "content")...)
	if len(content) != 1 {
		t.Fatalf("%s %s %s: the document gives %d content types, want 1", x.method, tmpl, status, len(content))
	}
	for ctype := range content {
		media, _, _ := strings.Cut(x.header.Get("Content-Type"), ";")
		if media != ctype {
			t.Errorf("%s: Content-Type %q, the document says %s", x, x.header.Get("Content-Type"), ctype)
		}
		s.validate(t, x, "answer", append(resp, "content", ctype, "schema"), x.body, ctype == "application/x-ndjson")
	}
	if x.status/100 != 2 {
		return
	}
	if body, ok := objectOr(s.doc, []string{"paths", tmpl, method})["requestBody"].(map[string]any); ok {
		switch {
		case len(bytes.TrimSpace(x.sent)) > 0:
			s.validate(t, x, "request body", []string{"paths", tmpl, method, "requestBody", "content", "application/json", "schema"}, x.sent, false)
		case body["required"] == true:
			t.Errorf("%s: succeeded without the body the document requires", x)
		}
	} else if len(x.sent) > 0 {
		t.Errorf("%s: succeeded with a body the document does not describe", x)
	}
}

// objectOr is the object at keys in v, or nil.
func objectOr(v any, keys []string) map[string]any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	m, _ := v.(map[string]any)
	return m
}

// operation is one route of the document.
type operation struct {
	method, path, id string
}

// operations lists the document's routes, in a stable order.
func (s *spec) operations(t *testing.T) []operation {
	var ops []operation
	for path, item := range s.object(t, "paths") {
		for method, op := range item.(map[string]any) {
			if method != "parameters" {
				id, _ := op.(map[string]any)["operationId"].(string)
				ops = append(ops, operation{strings.ToUpper(method), path, id})
			}
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].path+ops[i].method < ops[j].path+ops[j].method })
	return ops
}

// documents reports whether the document lists status among op's answers.
func (s *spec) documents(t *testing.T, op operation, status int) bool {
	_, ok := s.object(t, "paths", op.path, strings.ToLower(op.method), "responses")[strconv.Itoa(status)]
	return ok
}

// checkCoverage fails the test for every answer of every route the
// document lists that no exchange showed.
func (s *spec) checkCoverage(t *testing.T) {
	t.Helper()
	for _, op := range s.operations(t) {
		for status := range s.object(t, "paths", op.path, strings.ToLower(op.method), "responses") {
			if !s.seen[op.method+" "+op.path+" "+status] {
				t.Errorf("the document's %s %s %s was never seen", op.method, op.path, status)
			}
		}
	}
}

// client sends one request to the API: method, the path below api_path
// (with the query), a body (nil for none) and header name, value pairs.
// It sends the API token unless the pairs set Authorization ("" sends
// none), and Content-Type JSON with a body unless they set one.
type client func(t *testing.T, method, path string, body []byte, header ...string) exchange

// roomPath is the path of op for room.
func roomPath(op operation, room string) string {
	return strings.ReplaceAll(op.path, "{room}", url.PathEscape(room))
}
