package edge

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/fsttest"
)

// BenchmarkLoadSettings is the settings every request reads and checks:
// the config store's values and five room definitions.
func BenchmarkLoadSettings(b *testing.B) {
	cfg := mapConfig{"upstash_url": "https://db.upstash.io", "store_timeout": "0.4"}
	var names []string
	for i := 0; i < 5; i++ {
		name := fmt.Sprintf("room%d", i)
		names = append(names, name)
		cfg["room."+name] = fmt.Sprintf(`{"paths":["/r%d/"],"bypass_paths":["/r%d/static/"],"max_active_users":500,`+
			`"new_users_per_minute":120,"burst":20,"refresh":10}`, i, i)
	}
	cfg["rooms"] = strings.Join(names, ",")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if s := LoadSettings(cfg); len(s.Rooms) != 5 {
			b.Fatalf("%d rooms", len(s.Rooms))
		}
	}
}

// benchOrigin answers every request 200 with a short body.
type benchOrigin struct{}

func (benchOrigin) Send(context.Context, *fsthttp.Request) (*fsthttp.Response, error) {
	return &fsthttp.Response{StatusCode: fsthttp.StatusOK, Header: fsthttp.NewHeader(), Body: io.NopCloser(strings.NewReader("origin"))}, nil
}

// BenchmarkServe is one request through a sandbox's Handler, as platform
// builds it (with Kept): a new visitor's arrival (keys read, the pass and
// the mark signed, no store call), and a request a bypass rule forwards.
func BenchmarkServe(b *testing.B) {
	h := &Handler{
		Config: targetRooms, Templates: noTemplates{}, Origin: benchOrigin{},
		Secrets:           mapSecrets{m: map[string]string{SecretUpstashToken: "real-token", SecretSigningKeys: testKeys}},
		UpstashViaBackend: true, Now: fixed(time.Unix(1_700_000_000, 0)),
		Logf: func(string, ...any) {}, Kept: &Kept{},
	}
	for _, tc := range []struct {
		name, path string
		code       int
	}{
		{"arrival", "/cart", fsthttp.StatusTemporaryRedirect},
		{"bypass", "/static/app.css", fsthttp.StatusOK},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				r, err := fsthttp.NewRequest(fsthttp.MethodGet, "https://shop.example.com"+tc.path, nil)
				if err != nil {
					b.Fatal(err)
				}
				r.RemoteAddr = "203.0.113.9"
				w := fsttest.NewRecorder()
				h.ServeHTTP(context.Background(), w, r)
				if w.Code != tc.code {
					b.Fatalf("%d, want %d: %s", w.Code, tc.code, w.Body)
				}
			}
		})
	}
}
