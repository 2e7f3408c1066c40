package match

import "testing"

func TestHoldsAndSkipsPath(t *testing.T) {
	target := &Target{Hosts: []string{"shop.example.com"}, Paths: []string{"/tickets/", "/drops/*/buy", "*.json"}, Countries: []string{"DE"}}
	bypass := &Bypass{Paths: []string{"/tickets/static/"}, Extensions: []string{"css"}, Methods: []string{"OPTIONS"}}
	if err := target.Compile(); err != nil {
		t.Fatal(err)
	}
	if err := bypass.Compile(false); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path         string
		holds, skips bool
	}{
		{"/tickets/", true, false},
		{"/tickets/42", true, false},
		{"/drops/winter/buy", true, false},
		{"/drops/a/b/buy", false, false},
		{"/api/list.json", true, false},
		{"/tickets/static/site.js", true, true},
		{"/tickets/site.css", true, true},
		{"/other", false, false},
	}
	for _, tc := range tests {
		if got := target.HoldsPath(tc.path); got != tc.holds {
			t.Errorf("HoldsPath(%q) = %v, want %v (whatever the host and country)", tc.path, got, tc.holds)
		}
		if got := bypass.SkipsPath(tc.path); got != tc.skips {
			t.Errorf("SkipsPath(%q) = %v, want %v", tc.path, got, tc.skips)
		}
	}
	if (&Target{Paths: []string{"/"}}).HoldsPath("/") || (&Bypass{Paths: []string{"/"}}).SkipsPath("/") {
		t.Error("an uncompiled rule holds or skips a path")
	}
}
