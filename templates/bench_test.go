package templates

import "testing"

func BenchmarkRenderQueue(b *testing.B) {
	t, err := Queue.Default()
	if err != nil {
		b.Fatal(err)
	}
	values := map[string]string{}
	for _, f := range Queue.Fields {
		values[f] = "value of " + f // about as long as the page's words
	}
	values["title"], values["message"] = "Shop <sale> & more", `Say "hi"`
	var page string
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		page = t.Render(values)
	}
	b.StopTimer()
	if want := naiveRender(b, Queue, values); page != want {
		b.Fatalf("page:\n%s\nwant:\n%s", page, want)
	}
}

// BenchmarkDefaultQueue is the queue page's template as the edge gets it
// for each page it shows: the embedded default, parsed.
func BenchmarkDefaultQueue(b *testing.B) {
	var t *Template
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var err error
		if t, err = Queue.Default(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	values := map[string]string{"ticket": "<1>"}
	if got, want := t.Render(values), naiveRender(b, Queue, values); got != want {
		b.Fatalf("renders %q, want %q", got, want)
	}
}
