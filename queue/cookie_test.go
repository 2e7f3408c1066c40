package queue

import (
	"reflect"
	"strings"
	"testing"
)

func TestCookieValues(t *testing.T) {
	long := strings.Repeat("x", maxCookieValueLen+1)
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"none", nil, nil},
		{"one", []string{"wr=abc"}, []string{"abc"}},
		{"among others", []string{"a=1; wr=abc; b=2"}, []string{"abc"}},
		{"odd spacing", []string{"  a=1 ;wr =  abc  ;; b"}, []string{"abc"}},
		{"quoted", []string{`wr="abc"`}, []string{"abc"}},
		{"duplicates in order", []string{"wr=1; wr=2", "wr=3"}, []string{"1", "2", "3"}},
		{"empty value skipped", []string{"wr=; wr=2"}, []string{"2"}},
		{"no equals", []string{"wr; wr"}, nil},
		{"prefix names differ", []string{"xwr=1; wrx=2; w=3"}, nil},
		{"value with equals", []string{"wr=a=b"}, []string{"a=b"}},
		{"oversized skipped", []string{"wr=" + long + "; wr=ok"}, []string{"ok"}},
		{"garbage", []string{"\x00\xff;;=;=="}, nil},
		{"capped", []string{strings.Repeat("wr=v;", 100)}, []string{"v", "v", "v", "v", "v", "v", "v", "v"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CookieValues(tc.lines, "wr"); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func FuzzCookieValues(f *testing.F) {
	f.Add("a=1; wr=abc", "wr")
	f.Fuzz(func(t *testing.T, line, name string) {
		for _, v := range CookieValues([]string{line}, name) {
			if v == "" || len(v) > maxCookieValueLen {
				t.Fatalf("returned %q", v)
			}
		}
	})
}
