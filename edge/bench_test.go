package edge

import (
	"fmt"
	"strings"
	"testing"
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
