package sdkbackend

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const standIn = "http://127.0.0.1:34567"

func TestRewriteManifest(t *testing.T) {
	tests := []struct {
		name, in, want, wantErr string
	}{
		{
			name: "table per backend keeps the path",
			in:   "[local_server.backends.TheOrigin]\nurl = \"https://compute-sdk-test-backend.edgecompute.app/\"\n",
			want: "[local_server.backends.TheOrigin]\nurl = \"http://127.0.0.1:34567/\"\n",
		},
		{
			name: "indented, with a longer path",
			in:   "  [local_server.backends.httpedge]\n    url   =  \"https://http.edgecompute.app/anything/\"\n",
			want: "  [local_server.backends.httpedge]\n    url   =  \"http://127.0.0.1:34567/anything/\"\n",
		},
		{
			name: "no path stays without one",
			in:   "[local_server]\nbackends.httpme.url = \"https://http-me.fastly.dev\"\n",
			want: "[local_server]\nbackends.httpme.url = \"http://127.0.0.1:34567\"\n",
		},
		{
			name: "inline table and literal string",
			in:   "[local_server.backends]\nme = { url = 'https://http-me.fastly.dev/x?y=1', override_host = \"keep\" }\n",
			want: "[local_server.backends]\nme = { url = \"http://127.0.0.1:34567/x?y=1\", override_host = \"keep\" }\n",
		},
		{
			name: "other hosts, comments and settings stay byte for byte",
			in: "# url = \"https://http-me.fastly.dev\"\nname = \"x\"\n[local_server.backends.healthy]\n  url = \"https://example.com\"\n  health = \"healthy\"\n" +
				"[local_server.backends.me]\nurl = \"https://http-me.fastly.dev\" # url = \"https://http-me.fastly.dev\"\n",
			want: "# url = \"https://http-me.fastly.dev\"\nname = \"x\"\n[local_server.backends.healthy]\n  url = \"https://example.com\"\n  health = \"healthy\"\n" +
				"[local_server.backends.me]\nurl = \"http://127.0.0.1:34567\" # url = \"https://http-me.fastly.dev\"\n",
		},
		{
			name: "host in upper case",
			in:   "[local_server.backends.b]\nurl = \"https://HTTP-ME.fastly.dev/\"\n",
			want: "[local_server.backends.b]\nurl = \"http://127.0.0.1:34567/\"\n",
		},
		{
			name: "no backends",
			in:   "name = \"hello\"\n",
			want: "name = \"hello\"\n",
		},
		{
			name:    "a URL written in a way the text edit cannot follow",
			in:      "[local_server.backends.b]\nurl = \"\"\"https://http-me.fastly.dev/\"\"\"\n",
			wantErr: "cannot rewrite",
		},
		{
			name:    "not TOML",
			in:      "[local_server\n",
			wantErr: "expected",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RewriteManifest([]byte(tc.in), standIn)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("RewriteManifest error = %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("RewriteManifest =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	if _, err := RewriteManifest([]byte("x = 1\n"), "127.0.0.1:1"); err == nil {
		t.Error("RewriteManifest accepted a stand-in that is no URL")
	}
}

func TestHandler(t *testing.T) {
	srv := httptest.NewServer(Handler())
	t.Cleanup(srv.Close)
	tests := []struct {
		name, method, host, path string
		header                   http.Header
		body                     string
		wantStatus               int
		wantHeader               http.Header
		wantBody                 string // the whole body, or with wantJSON a part of it
		wantJSON                 map[string]string
	}{
		{name: "test backend root", host: TestBackend, path: "/", wantStatus: 200, wantBody: "Compute SDK Test Backend"},
		{name: "byte repeater", host: TestBackend, path: "/byte_repeater", wantStatus: 200, wantBody: "123456789012\n"},
		{name: "streaming close", host: TestBackend, path: "/streaming_close", wantStatus: 200, wantBody: "will smith\n"},
		{name: "async select 1", host: TestBackend, path: "/async_select_1", wantStatus: 200, wantHeader: http.Header{"Fooname": {"FooValue"}}},
		{name: "async select 2", host: TestBackend, path: "/async_select_2", wantStatus: 200, wantHeader: http.Header{"Barname": {"BarValue"}}},
		{name: "request upstream", host: TestBackend, path: "/request_upstream", header: http.Header{"Upstreamheader": {"UpstreamValue"}},
			wantStatus: 200, wantBody: "Hello from Origin",
			wantHeader: http.Header{"Originheader": {"OriginValue"}, "X-Cat": {"meow, nyan, mrrow, miau"}}},
		{name: "request upstream without the guest's header", host: TestBackend, path: "/request_upstream", wantStatus: 400,
			wantBody: "UpstreamHeader = \"\", want \"UpstreamValue\"\n"},
		{name: "test backend unknown path", host: TestBackend, path: "/nope", wantStatus: 404, wantBody: "404 page not found\n"},
		{name: "echo", host: HTTPMe, path: "/echo/?body=hello,+world", wantStatus: 200, wantBody: "hello, world"},
		{name: "anything, indented as text tests match it", host: HTTPMe, path: "/anything/1/?a=b", header: http.Header{"Foobar": {"quxzot"}},
			wantStatus: 200, wantBody: `"foobar": "quxzot",`,
			wantJSON: map[string]string{"foobar": "quxzot", "host": HTTPMe}},
		{name: "anything with a length", method: "POST", host: HTTPEdge, path: "/anything/anything/", body: "abc",
			wantStatus: 200, wantJSON: map[string]string{"content-length": "3", "host": HTTPEdge}},
		{name: "anything chunked", method: "POST", host: HTTPEdge, path: "/anything/", body: "chunked",
			wantStatus: 200, wantJSON: map[string]string{"transfer-encoding": "chunked", "host": HTTPEdge}},
		{name: "echo service unknown path", host: HTTPEdge, path: "/status/200", wantStatus: 404, wantBody: "404 page not found\n"},
		{name: "unknown host", host: "example.com", path: "/", wantStatus: 421, wantBody: "sdkbackend: no stand-in for host \"example.com\"\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = "GET"
			}
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
				if tc.body == "chunked" {
					body = io.MultiReader(body) // no known length: sent chunked
				}
			}
			req, err := http.NewRequest(method, srv.URL+tc.path, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = tc.host
			for k, v := range tc.header {
				req.Header[k] = v
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantStatus {
				t.Errorf("status = %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			for k, v := range tc.wantHeader {
				if g := resp.Header.Values(k); strings.Join(g, "|") != strings.Join(v, "|") {
					t.Errorf("header %s = %q, want %q", k, g, v)
				}
			}
			if tc.wantJSON == nil {
				if string(got) != tc.wantBody {
					t.Errorf("body = %q, want %q", got, tc.wantBody)
				}
				return
			}
			if !strings.Contains(string(got), tc.wantBody) {
				t.Errorf("body = %s, want it to contain %s", got, tc.wantBody)
			}
			var doc struct {
				Headers map[string]string `json:"headers"`
				Method  string            `json:"method"`
				Body    string            `json:"body"`
			}
			if err := json.Unmarshal(got, &doc); err != nil {
				t.Fatalf("body %s: %v", got, err)
			}
			for k, v := range tc.wantJSON {
				if doc.Headers[k] != v {
					t.Errorf("headers[%s] = %q, want %q", k, doc.Headers[k], v)
				}
			}
			if doc.Method != method || doc.Body != tc.body {
				t.Errorf("method, body = %q, %q; want %q, %q", doc.Method, doc.Body, method, tc.body)
			}
		})
	}
}

func TestStandInEnv(t *testing.T) {
	want := "FASTLYHOST_STAND_INS=compute-sdk-test-backend.edgecompute.app=" + standIn +
		",http-me.fastly.dev=" + standIn + ",http.edgecompute.app=" + standIn
	if got := StandInEnv(standIn + "/"); got != want {
		t.Errorf("StandInEnv = %q, want %q", got, want)
	}
}
