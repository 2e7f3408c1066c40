package passjwt

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// claimSamples are payloads for the decoder: what Sign writes, and every
// kind of hostile or odd input (wrong types, escapes, case and Unicode
// folding of names, duplicates, nulls, numbers as strings, nesting,
// overflow, invalid JSON). A function, not a package-level var: TinyGo 0.33
// has miscompiled package-level values computed by calls.
func claimSamples() []string {
	return []string{
		`{"knd":"session","ep":1700000000000,"sid":"0123456789abcdef0123456789abcdef","aud":["shop"],"exp":1763817000,"iat":1763815200}`,
		`{"knd":"ticket","tkt":48213,"ep":-1,"aud":["shop"],"exp":1763817000,"iat":1763815200}`,
		`{}`, `null`, `[]`, `"x"`, `1`, `true`, ``, ` `, `{`, `{"knd"}`, `{"knd":}`, `{,}`, `{"a":1,}`, `{} {}`, `{}x`,
		` { "knd" : "ticket" , "tkt" : 1 } `, "{\"knd\":\"a\tb\"}", "{\"knd\":\"\x00\"}",
		`{"KND":"ticket","Tkt":2,"EP":3,"SID":"s","Aud":"r","EXP":1,"IAT":2,"NBF":3,"ISS":"i","SUB":"s","JTI":"j"}`,
		`{"\u212And":"kelvin","\u017Fid":"long s","k\u006ed":"escaped name"}`,
		"{\"k\xffnd\":\"bad utf-8 name\",\"sid\":\"bad \xff utf-8 value\"}",
		`{"knd":"\u0074icket","sid":"\ud83d\ude00 \ud800 \u2028","aud":["\u00fc"],"iss":"<&>"}`,
		`{"knd":"a","knd":"b","tkt":1,"tkt":null,"exp":5,"exp":null,"aud":["x"],"aud":null,"iat":1,"IAT":2}`,
		`{"knd":null,"tkt":null,"ep":null,"sid":null,"aud":null,"exp":null,"nbf":null,"iat":null,"jti":null}`,
		`{"knd":1}`, `{"knd":true}`, `{"knd":["a"]}`, `{"knd":{"a":1}}`, `{"sid":2}`,
		`{"tkt":"1"}`, `{"tkt":1.0}`, `{"tkt":1e2}`, `{"tkt":-0}`, `{"tkt":9223372036854775807}`, `{"tkt":-9223372036854775808}`,
		`{"tkt":9223372036854775808}`, `{"tkt":123456789012345678}`, `{"tkt":1234567890123456789}`, `{"ep":true}`, `{"ep":[1]}`,
		`{"exp":"1763817000"}`, `{"exp":"1.5e9"}`, `{"exp":" 1"}`, `{"exp":""}`, `{"exp":"x"}`, `{"exp":1.5}`, `{"exp":-1.25}`,
		`{"exp":1e999}`, `{"exp":-1e999}`, `{"exp":1e-400}`, `{"exp":1e300}`, `{"exp":123456789012345}`, `{"exp":1234567890123456}`,
		`{"exp":-0}`, `{"exp":true}`, `{"exp":{}}`, `{"exp":[]}`, `{"nbf":1,"iat":-62135596800}`,
		`{"aud":"one"}`, `{"aud":[]}`, `{"aud":["a","b"]}`, `{"aud":[ "a" ]}`, `{"aud":[1]}`, `{"aud":[null]}`, `{"aud":[["a"]]}`,
		`{"aud":{}}`, `{"aud":5}`, `{"aud":true}`, `{"aud":["a\"b"]}`,
		`{"x":{"y":[1,{"z":"}]\""}]},"knd":"after nesting"}`, `{"x":"\"}","knd":"after a quote"}`,
		`{"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `,"knd":"deep"}`,
		`{"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
		`{"knd":"` + strings.Repeat("x", 5000) + `"}`,
	}
}

func TestClaimsMatchEncodingJSON(t *testing.T) {
	for _, s := range claimSamples() {
		checkClaimsMatch(t, []byte(s))
	}
}

func FuzzClaimsMatchEncodingJSON(f *testing.F) {
	for _, s := range claimSamples() {
		if len(s) < 1000 {
			f.Add([]byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkClaimsMatch(t, data) })
}

// checkClaimsMatch decodes data with jwtClaims, directly and through
// encoding/json (as jwt does), and with plainClaims: both must succeed or
// both fail, and succeed with the same claims.
func checkClaimsMatch(t *testing.T, data []byte) {
	t.Helper()
	var want plainClaims
	wantErr := json.Unmarshal(data, &want)
	var direct, via jwtClaims
	directErr := direct.UnmarshalJSON(data)
	viaErr := json.Unmarshal(data, &via)
	for _, got := range []struct {
		how string
		c   jwtClaims
		err error
	}{{"UnmarshalJSON", direct, directErr}, {"json.Unmarshal", via, viaErr}} {
		if (got.err == nil) != (wantErr == nil) {
			t.Errorf("%.80q: %s: error %v, encoding/json: %v", data, got.how, got.err, wantErr)
			continue
		}
		if got.err == nil && !reflect.DeepEqual(got.c, jwtClaims(want)) {
			t.Errorf("%.80q: %s: %+v, encoding/json: %+v", data, got.how, got.c, want)
		}
	}
}
