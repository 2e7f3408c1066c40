// Package sdkbackend stands in for the internet origins the Fastly Go SDK's
// integration tests (compute-sdk-go's integration_tests) send requests to,
// so those tests run against fastlyhost with no internet. It answers only
// what those tests check; it is no copy of the real services.
package sdkbackend

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/edgequeue/waitingroom/tools/fastlyhost"
)

// The hosts the stand-in answers for.
const (
	// TestBackend is Fastly's Compute SDK test origin.
	TestBackend = "compute-sdk-test-backend.edgecompute.app"
	// HTTPMe and HTTPEdge are Fastly's request echo services.
	HTTPMe   = "http-me.fastly.dev"
	HTTPEdge = "http.edgecompute.app"
)

// Hosts are the internet host names the stand-in answers for.
//
// example.com and example.org, which some manifests also name, are left
// out on purpose: no test sends a request to them, and one test
// (integration_tests/backend) reads such a backend's host back and parses
// "host:port" as a URL, which "example.com:443" survives and
// "127.0.0.1:34567" does not.
var Hosts = []string{TestBackend, HTTPMe, HTTPEdge}

// Handler returns the stand-in. It tells the hosts apart by the Host
// header, which fastlyhost sets from the guest's URL (or the backend's
// override_host), as Viceroy does.
func Handler() http.Handler {
	return http.HandlerFunc(serve)
}

func serve(w http.ResponseWriter, r *http.Request) {
	host := strings.ToLower(r.Host)
	if h, _, found := strings.Cut(host, ":"); found {
		host = h
	}
	switch host {
	case TestBackend:
		testBackend(w, r)
	case HTTPMe, HTTPEdge:
		echo(w, r)
	default:
		http.Error(w, fmt.Sprintf("sdkbackend: no stand-in for host %q", r.Host), http.StatusMisdirectedRequest)
	}
}

// testBackend answers the paths of the SDK's test origin that the tests
// read (byte_repeater, streaming_close, async_select, request_upstream,
// backend, hello_world).
func testBackend(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/":
		io.WriteString(w, "Compute SDK Test Backend")
	case "/byte_repeater":
		// The test doubles every byte: "112233445566778899001122\n\n".
		io.WriteString(w, "123456789012\n")
	case "/streaming_close":
		// The test drops the vowels: "wll smth\n".
		io.WriteString(w, "will smith\n")
	case "/async_select_1":
		w.Header().Set("FooName", "FooValue")
	case "/async_select_2":
		w.Header().Set("BarName", "BarValue")
	case "/request_upstream":
		// The guest sets this header; refusing a request without it
		// checks that the host passes the guest's headers on.
		if got := r.Header.Get("UpstreamHeader"); got != "UpstreamValue" {
			http.Error(w, fmt.Sprintf("UpstreamHeader = %q, want %q", got, "UpstreamValue"), http.StatusBadRequest)
			return
		}
		w.Header().Set("OriginHeader", "OriginValue")
		// One field whose value holds commas, which must reach the guest
		// as one value, not four.
		w.Header().Set("X-Cat", "meow, nyan, mrrow, miau")
		io.WriteString(w, "Hello from Origin")
	default:
		http.NotFound(w, r)
	}
}

// anything is the JSON the echo services return for /anything/...: the
// request as the origin saw it, header names in lower case.
type anything struct {
	Args    map[string]string `json:"args"`
	Body    string            `json:"body"`
	Headers map[string]string `json:"headers"`
	Method  string            `json:"method"`
	URL     string            `json:"url"`
}

// echo answers http-me's /echo/?body=... with the body asked for, and
// /anything/... with the request itself.
func echo(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/echo" || r.URL.Path == "/echo/":
		io.WriteString(w, r.URL.Query().Get("body"))
	case r.URL.Path == "/anything" || strings.HasPrefix(r.URL.Path, "/anything/"):
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		a := anything{Args: map[string]string{}, Body: string(body), Headers: map[string]string{},
			Method: r.Method, URL: "http://" + r.Host + r.RequestURI}
		for k, v := range r.URL.Query() {
			a.Args[k] = strings.Join(v, ",")
		}
		for k, v := range r.Header {
			a.Headers[strings.ToLower(k)] = strings.Join(v, ", ")
		}
		// Go's server takes these out of the header map; the services
		// report them as received.
		a.Headers["host"] = r.Host
		if len(r.TransferEncoding) > 0 {
			a.Headers["transfer-encoding"] = strings.Join(r.TransferEncoding, ", ")
		}
		// Indented with ": " as the real services do, which a test
		// matches as text (integration_tests/internal_debug).
		doc, err := json.MarshalIndent(a, "", "  ")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(append(doc, '\n'))
	default:
		http.NotFound(w, r)
	}
}

// urlKey finds a TOML key/value pair whose key ends in "url" and whose
// value is a one-line string: the forms a backend URL takes in a manifest
// ([local_server.backends.x] url = "...", backends.x.url = "...", or an
// inline table { url = "..." }).
var urlKey = regexp.MustCompile(`(\burl\s*=\s*)("(?:[^"\\\n]|\\.)*"|'[^'\n]*')`)

// RewriteManifest points the backends of a fastly.toml whose URL's host is
// one of Hosts at standIn (such as "http://127.0.0.1:34567"), keeping
// each URL's path; every other byte stays as it was. No override_host is
// added: the SDK's tests send absolute URLs, whose host fastlyhost (like
// Viceroy) puts in the Host header, and that header is what Handler
// dispatches on.
func RewriteManifest(manifest []byte, standIn string) ([]byte, error) {
	si, err := url.Parse(standIn)
	if err != nil || si.Scheme == "" || si.Host == "" {
		return nil, fmt.Errorf("stand-in %q is not an absolute URL", standIn)
	}
	base := si.Scheme + "://" + si.Host
	var before map[string]any
	if err := toml.Unmarshal(manifest, &before); err != nil {
		return nil, err
	}
	// rewrites maps each backend URL to rewrite to its new value.
	rewrites := map[string]string{}
	for _, def := range backends(before) {
		raw, _ := def["url"].(string)
		u, err := url.Parse(raw)
		if err != nil || !slices.Contains(Hosts, strings.ToLower(u.Hostname())) {
			continue
		}
		rest := raw[strings.Index(raw, "://")+len("://"):]
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			rest = rest[i:]
		} else {
			rest = ""
		}
		rewrites[raw] = base + rest
	}
	var out []byte
	last := 0
	for _, m := range urlKey.FindAllSubmatchIndex(manifest, -1) {
		lineStart := bytes.LastIndexByte(manifest[:m[0]], '\n') + 1
		if bytes.IndexByte(manifest[lineStart:m[0]], '#') >= 0 {
			continue // in a comment
		}
		var value string
		if err := toml.Unmarshal(append([]byte("v = "), manifest[m[4]:m[5]]...), &struct {
			V *string `toml:"v"`
		}{&value}); err != nil {
			continue
		}
		to, ok := rewrites[value]
		if !ok {
			continue
		}
		quoted, _ := json.Marshal(to) // a JSON string of a URL is a TOML basic string
		out = append(append(out, manifest[last:m[4]]...), quoted...)
		last = m[5]
	}
	out = append(out, manifest[last:]...)
	// The text was edited by pattern, so check that exactly the backend
	// URLs changed, and nothing else.
	var after map[string]any
	if err := toml.Unmarshal(out, &after); err != nil {
		return nil, fmt.Errorf("rewritten manifest: %w", err)
	}
	for _, def := range backends(before) {
		if to, ok := rewrites[def["url"].(string)]; ok {
			def["url"] = to
		}
	}
	if !reflect.DeepEqual(before, after) {
		return nil, fmt.Errorf("cannot rewrite the backend URLs of this manifest by text alone")
	}
	return out, nil
}

// backends returns a decoded manifest's backend definitions.
func backends(m map[string]any) []map[string]any {
	ls, _ := m["local_server"].(map[string]any)
	bs, _ := ls["backends"].(map[string]any)
	var defs []map[string]any
	for _, def := range bs {
		if d, ok := def.(map[string]any); ok {
			if _, ok := d["url"].(string); ok {
				defs = append(defs, d)
			}
		}
	}
	return defs
}

// StandInEnv is the environment entry ("NAME=value") that has fastlyhost
// send the guest's dynamic backends for Hosts to standIn. A manifest names
// only the static backends; a dynamic one is named by the guest's code
// (integration_tests/backend registers one for TestBackend), so its
// redirection is given to the host process instead.
func StandInEnv(standIn string) string {
	var b bytes.Buffer
	for i, h := range Hosts {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%s", h, strings.TrimSuffix(standIn, "/"))
	}
	return fastlyhost.StandInsEnv + "=" + b.String()
}
