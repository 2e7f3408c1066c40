package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/edgequeue/waitingroom/control"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// maxBody bounds a request body: the largest the API takes is a PATCH of
// four short fields.
const maxBody = 4 << 10

// readInput reads the request's body, a JSON object of fields, into an
// Input as encoding/json would read it into a struct of the fields'
// types with DisallowUnknownFields: the first field in the body's order
// that is unknown or of the wrong type is refused, a name matches a field
// in any case. Then a field named in another case than the field's ("N"
// for "n") and a null value, which would read as a field left out, are
// refused too, in name order, so that a body with two faults always gets
// the same answer; and so is anything after the object. An empty body is
// refused when there are fields, else reads as no field; so does null.
// Last, a Required field left out is refused.
func readInput(r *fsthttp.Request, fields []control.Field) (control.Input, error) {
	in := control.Input{}
	body, err := readBody(r, len(fields) > 0)
	if err != nil || body == nil {
		return in, err
	}
	if ct := r.Header.Get("Content-Type"); !isJSON(ct) {
		return nil, &Error{Status: fsthttp.StatusUnsupportedMediaType, Code: "unsupported_media_type",
			Message: fmt.Sprintf("the body must be sent as Content-Type: application/json, not %s", quote(ct))}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var object map[string]json.RawMessage
	if err := dec.Decode(&object); err != nil {
		return nil, jsonRefusal(err)
	}
	if object != nil {
		if err := readFields(body, fields, in); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &Error{Status: fsthttp.StatusBadRequest, Code: "invalid_json", Message: "the body holds more than one JSON object"}
	}
	names := make([]string, 0, len(object))
	for name := range object {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if string(object[name]) == "null" {
			return nil, &Error{Status: fsthttp.StatusBadRequest, Code: "invalid_field", Field: name,
				Message: "must not be null: leave the field out instead"}
		}
		if field(fields, name, false) == nil {
			return nil, &Error{Status: fsthttp.StatusBadRequest, Code: "unknown_field", Field: name,
				Message: "is not a field of this request (names are case-sensitive; see the OpenAPI document)"}
		}
	}
	return in, required(in, fields)
}

// readFields reads the fields of body, a JSON object, into in in the
// body's order: a later value of a field replaces an earlier one, and
// the first fault is the answer.
func readFields(body []byte, fields []control.Field, in control.Input) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.Token() // {
	var fault error
	for dec.More() {
		key, _ := dec.Token()
		name, _ := key.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return jsonRefusal(err)
		}
		f := field(fields, name, true)
		if f == nil {
			if fault == nil {
				fault = &Error{Status: fsthttp.StatusBadRequest, Code: "unknown_field", Field: name, Message: "is not a field of this request (see the OpenAPI document)"}
			}
			continue
		}
		if string(raw) == "null" {
			continue
		}
		v, err := decode(raw, f.Kind)
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			typ.Field = f.Name
		}
		if err != nil && fault == nil {
			fault = jsonRefusal(err)
		}
		if err == nil {
			in[f.Name] = v
		}
	}
	return fault
}

// field is the field of that name, in any case when anyCase, preferring
// the exact one; nil when none is.
func field(fields []control.Field, name string, anyCase bool) *control.Field {
	var folded *control.Field
	for i := range fields {
		switch {
		case fields[i].Name == name:
			return &fields[i]
		case anyCase && folded == nil && strings.EqualFold(fields[i].Name, name):
			folded = &fields[i]
		}
	}
	return folded
}

// decode is a field's JSON value as its kind holds it.
func decode(raw json.RawMessage, k control.Kind) (any, error) {
	switch k {
	case control.Whole:
		var n int
		err := json.Unmarshal(raw, &n)
		return n, err
	case control.Number:
		var x float64
		err := json.Unmarshal(raw, &x)
		return x, err
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// required refuses in when it lacks a Required field.
func required(in control.Input, fields []control.Field) error {
	for _, f := range fields {
		if _, ok := in[f.Name]; !ok && f.Required != "" {
			return &control.InputError{Field: f.Name, Message: "is required: " + f.Required}
		}
	}
	return nil
}

// readBody reads the request's body, at most maxBody bytes: nil when it
// is empty, which is refused when required.
func readBody(r *fsthttp.Request, required bool) ([]byte, error) {
	tooLarge := &Error{Status: fsthttp.StatusRequestEntityTooLarge, Code: "body_too_large",
		Message: fmt.Sprintf("the body is larger than %d bytes", maxBody)}
	if n, err := strconv.ParseInt(r.Header.Get("Content-Length"), 10, 64); err == nil && n > maxBody {
		return nil, tooLarge
	}
	var body []byte
	if r.Body != nil {
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil {
			return nil, &Error{Status: fsthttp.StatusBadRequest, Code: "invalid_json", Message: "the body could not be read: " + err.Error()}
		}
	}
	if len(body) > maxBody {
		return nil, tooLarge
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if required {
			return nil, &Error{Status: fsthttp.StatusBadRequest, Code: "invalid_json", Message: "the body must be a JSON object; it is empty"}
		}
		return nil, nil
	}
	return body, nil
}

// isJSON reports whether a Content-Type header says JSON (any charset).
func isJSON(ct string) bool {
	media, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(media), "application/json")
}

// jsonRefusal says what is wrong with a body's JSON, naming the field.
func jsonRefusal(err error) *Error {
	var typ *json.UnmarshalTypeError
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &typ) && typ.Field != "":
		return &Error{Status: fsthttp.StatusBadRequest, Code: "invalid_field", Field: typ.Field,
			Message: fmt.Sprintf("must be %s, not a JSON %s", kind(typ.Type.Kind().String()), typ.Value)}
	case errors.As(err, &typ):
		return &Error{Status: fsthttp.StatusBadRequest, Code: "invalid_json", Message: fmt.Sprintf("the body must be a JSON object, not a JSON %s", typ.Value)}
	case errors.As(err, &syntax):
		return &Error{Status: fsthttp.StatusBadRequest, Code: "invalid_json", Message: fmt.Sprintf("the body is not valid JSON (at byte %d): %v", syntax.Offset, err)}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		return &Error{Status: fsthttp.StatusBadRequest, Code: "unknown_field", Field: name, Message: "is not a field of this request (see the OpenAPI document)"}
	}
	return &Error{Status: fsthttp.StatusBadRequest, Code: "invalid_json", Message: "the body is not valid JSON: " + err.Error()}
}

// kind names a Go kind as JSON calls it.
func kind(k string) string {
	switch {
	case k == "string":
		return "a string"
	case strings.HasPrefix(k, "int") || strings.HasPrefix(k, "uint"):
		return "a whole number"
	}
	return "a number"
}

// intParam reads the query parameter name, a whole number from lo to hi,
// or def when it is absent.
func intParam(q url.Values, name string, def, lo, hi int) (int, error) {
	v, ok := q[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v[0])
	if err != nil || n < lo || n > hi {
		return 0, &Error{Status: fsthttp.StatusBadRequest, Code: "invalid_parameter", Field: name,
			Message: fmt.Sprintf("must be a whole number from %d to %d, not %s", lo, hi, quote(v[0]))}
	}
	return n, nil
}
