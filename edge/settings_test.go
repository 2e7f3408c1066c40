package edge

import (
	"strings"
	"testing"
	"time"
)

type mapConfig map[string]string

func (m mapConfig) Get(k string) (string, error) {
	if v, ok := m[k]; ok {
		return v, nil
	}
	return "", ErrNotFound
}

func TestLoadSettings(t *testing.T) {
	room := `{"paths":["/"],"new_users_per_minute":5}`
	tests := []struct {
		name        string
		config      mapConfig
		rooms       int
		broken      bool
		adminPath   string
		timeout     time.Duration
		wantProblem string
	}{
		{"defaults", mapConfig{"upstash_url": "https://db"}, 0, false, DefaultAdminPath, DefaultStoreTimeout, ""},
		{"everything set", mapConfig{"upstash_url": "https://db", "admin_path": "/ops/", "store_timeout_ms": "250", "rooms": "a,b", "room.a": room, "room.b": room}, 2, false, "/ops", 250 * time.Millisecond, ""},
		{"bad admin path", mapConfig{"upstash_url": "https://db", "admin_path": "ops"}, 0, false, DefaultAdminPath, DefaultStoreTimeout, "admin_path"},
		{"bad timeout", mapConfig{"upstash_url": "https://db", "store_timeout_ms": "5"}, 0, false, DefaultAdminPath, DefaultStoreTimeout, "store_timeout_ms"},
		{"no upstash url", mapConfig{}, 0, false, DefaultAdminPath, DefaultStoreTimeout, "upstash_url"},
		{"bad upstash url", mapConfig{"upstash_url": "db.test"}, 0, false, DefaultAdminPath, DefaultStoreTimeout, "upstash_url"},
		{"bad index", mapConfig{"upstash_url": "https://db", "rooms": "A"}, 0, true, DefaultAdminPath, DefaultStoreTimeout, "rooms"},
		{"one bad room", mapConfig{"upstash_url": "https://db", "rooms": "a,b", "room.a": room, "room.b": "{"}, 1, true, DefaultAdminPath, DefaultStoreTimeout, `room "b"`},
		{"missing room", mapConfig{"upstash_url": "https://db", "rooms": "a,b", "room.a": room}, 1, true, DefaultAdminPath, DefaultStoreTimeout, "room.b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := LoadSettings(tc.config)
			if len(s.Rooms) != tc.rooms || s.RoomsBroken != tc.broken || s.AdminPath != tc.adminPath || s.StoreTimeout != tc.timeout {
				t.Fatalf("got %d rooms, broken %v, admin %q, timeout %v", len(s.Rooms), s.RoomsBroken, s.AdminPath, s.StoreTimeout)
			}
			var all []string
			for _, p := range s.Problems {
				all = append(all, p.Error())
			}
			joined := strings.Join(all, "\n")
			if (tc.wantProblem == "") != (len(all) == 0) || !strings.Contains(joined, tc.wantProblem) {
				t.Fatalf("problems %q, want one mentioning %q", joined, tc.wantProblem)
			}
		})
	}
}
