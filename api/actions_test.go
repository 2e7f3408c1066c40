package api

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/edgequeue/waitingroom/control"
)

// schema is what the test reads of a body's JSON schema in the document.
type schema struct {
	Ref        string             `json:"$ref"`
	Type       any                `json:"type"`
	Enum       []string           `json:"enum"`
	Properties map[string]*schema `json:"properties"`
	Required   []string           `json:"required"`
	Additional *bool              `json:"additionalProperties"`
}

// TestDocumentCoversActions: every operator action of control.Actions
// has its route in the OpenAPI document, with a body of exactly its
// fields, of their kinds, required as they are, and required itself when
// the action has fields (the API reads a body so: readInput); and the
// actions a Result names are the table's.
func TestDocumentCoversActions(t *testing.T) {
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal([]byte(openAPI), &doc); err != nil {
		t.Fatal(err)
	}
	var result struct {
		Properties struct {
			Action schema `json:"action"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(doc.Components.Schemas["Result"], &result); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range control.Actions() {
		names = append(names, a.Name)
	}
	enum := result.Properties.Action.Enum
	sort.Strings(names)
	sort.Strings(enum)
	if strings.Join(enum, " ") != strings.Join(names, " ") {
		t.Errorf("a Result's action is one of %q, want %q", enum, names)
	}
	types := map[control.Kind]string{control.Whole: "integer", control.Number: "number", control.Text: "string", control.Choice: "string"}
	for _, a := range control.Actions() {
		t.Run(a.Name, func(t *testing.T) {
			var op struct {
				Body *struct {
					Required bool `json:"required"`
					Content  map[string]struct {
						Schema *schema `json:"schema"`
					} `json:"content"`
				} `json:"requestBody"`
			}
			raw, ok := doc.Paths[a.Path][strings.ToLower(a.Method)]
			if !ok || json.Unmarshal(raw, &op) != nil || op.Body == nil || op.Body.Content["application/json"].Schema == nil {
				t.Fatalf("the document has no %s %s with a JSON body", a.Method, a.Path)
			}
			if op.Body.Required != (len(a.Fields) > 0) {
				t.Errorf("the body is required %v, want %v", op.Body.Required, len(a.Fields) > 0)
			}
			s0 := op.Body.Content["application/json"].Schema
			s := s0
			if s.Ref != "" {
				s = nil
				json.Unmarshal(doc.Components.Schemas[strings.TrimPrefix(s0.Ref, "#/components/schemas/")], &s)
			}
			if s == nil || s.Type != "object" || s.Additional == nil || *s.Additional {
				t.Fatalf("the body is not an object of its fields alone: %+v", s)
			}
			var want, required []string
			for _, f := range a.Fields {
				want = append(want, f.Name)
				if f.Required != "" {
					required = append(required, f.Name)
				}
				p := s.Properties[f.Name]
				if p == nil || p.Type != types[f.Kind] || strings.Join(p.Enum, " ") != strings.Join(f.Choices, " ") {
					t.Errorf("field %s: the document has %+v, want type %s, enum %q", f.Name, p, types[f.Kind], f.Choices)
				}
			}
			var got []string
			for name := range s.Properties {
				got = append(got, name)
			}
			sort.Strings(got)
			sort.Strings(want)
			sort.Strings(required)
			sort.Strings(s.Required)
			if strings.Join(got, " ") != strings.Join(want, " ") || strings.Join(s.Required, " ") != strings.Join(required, " ") {
				t.Errorf("the body's fields are %q, required %q; want %q, required %q", got, s.Required, want, required)
			}
		})
	}
}
