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

	"github.com/fastly/compute-sdk-go/fsthttp"
)

// maxBody bounds a request body: the largest the API takes is a PATCH of
// four short fields.
const maxBody = 4 << 10

// readJSON reads the request's body, a JSON object, into v (a pointer to
// a struct), refusing fields v does not have, null values, and anything
// after the object. An empty body is refused when required, else leaves v
// as it is.
func readJSON(r *fsthttp.Request, v any, required bool) error {
	tooLarge := &Error{Status: fsthttp.StatusRequestEntityTooLarge, Code: "body_too_large",
		Message: fmt.Sprintf("the body is larger than %d bytes", maxBody)}
	if n, err := strconv.ParseInt(r.Header.Get("Content-Length"), 10, 64); err == nil && n > maxBody {
		return tooLarge
	}
	var body []byte
	if r.Body != nil {
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil {
			return &Error{Status: fsthttp.StatusBadRequest, Code: "invalid_json", Message: "the body could not be read: " + err.Error()}
		}
	}
	if len(body) > maxBody {
		return tooLarge
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if required {
			return &Error{Status: fsthttp.StatusBadRequest, Code: "invalid_json", Message: "the body must be a JSON object; it is empty"}
		}
		return nil
	}
	if ct := r.Header.Get("Content-Type"); !isJSON(ct) {
		return &Error{Status: fsthttp.StatusUnsupportedMediaType, Code: "unsupported_media_type",
			Message: fmt.Sprintf("the body must be sent as Content-Type: application/json, not %s", quote(ct))}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonRefusal(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &Error{Status: fsthttp.StatusBadRequest, Code: "invalid_json", Message: "the body holds more than one JSON object"}
	}
	return checkNames(body, v)
}

// checkNames refuses what encoding/json lets through into v, decoded
// from body: a field named in another case than v's ("N" for "n"), and a
// null, which reads as a field left out. Fields are checked in name
// order, so a body with two faults always gets the same answer.
func checkNames(body []byte, v any) error {
	var fields, known map[string]json.RawMessage
	canonical, err := json.Marshal(v)
	if err != nil || json.Unmarshal(canonical, &known) != nil || json.Unmarshal(body, &fields) != nil {
		return &Error{Status: fsthttp.StatusBadRequest, Code: "invalid_json", Message: "the body must be a JSON object"}
	}
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if string(fields[name]) == "null" {
			return &Error{Status: fsthttp.StatusBadRequest, Code: "invalid_field", Field: name,
				Message: "must not be null: leave the field out instead"}
		}
		if _, ok := known[name]; !ok {
			return &Error{Status: fsthttp.StatusBadRequest, Code: "unknown_field", Field: name,
				Message: "is not a field of this request (names are case-sensitive; see the OpenAPI document)"}
		}
	}
	return nil
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
