// Package schemas compiles the project's JSON Schema documents (the admin
// API's OpenAPI document, the visitor answers' schema) as the suites that
// check answers against them need: draft 2020-12 unless a document says
// otherwise, and formats asserted rather than taken as notes, so a
// "date-time" that is not one fails.
package schemas

import (
	"bytes"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Compiler is a compiler holding the document raw under url: compile
// url or url#/json/pointer from it.
func Compiler(url string, raw []byte) (*jsonschema.Compiler, error) {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(url, inst); err != nil {
		return nil, err
	}
	return c, nil
}
