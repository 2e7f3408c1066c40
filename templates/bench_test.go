package templates

import "testing"

func BenchmarkRenderQueue(b *testing.B) {
	t, err := Queue.Default()
	if err != nil {
		b.Fatal(err)
	}
	values := map[string]string{"room": "shop", "ticket": "48213", "position": "1204", "ahead": "1203",
		"now_serving": "47010", "issued": "52977", "wait": "about 6 minutes", "refresh_seconds": "10", "status": "waiting"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if len(t.Render(values)) == 0 {
			b.Fatal("empty page")
		}
	}
}
