package locale

import (
	"strings"
	"testing"
	"time"
	"unicode"
)

func TestNegotiate(t *testing.T) {
	tests := []struct {
		header, def, want string
	}{
		{"", "de", "de"},
		{"", "xx", "en"},
		{"", "", "en"},
		{"de", "en", "de"},
		{"de-AT", "en", "de"},
		{"DE-at", "en", "de"},
		{"pt-BR,pt;q=0.9,en;q=0.8", "en", "pt"},
		{"fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5", "en", "fr"},
		{"en;q=0.5, ja", "en", "ja"},
		{"en;q=0.5, ja;q=0.5", "de", "en"},    // equal quality: the first listed
		{"ja;q=0.5, en;q=0.5", "de", "ja"},    // likewise
		{"nl, sv;q=0.9", "es", "es"},          // nothing spoken: the room's
		{"nl, de;q=0.1", "es", "de"},          // anything spoken beats the default
		{"*", "fr", "fr"},                     // the wildcard is the room's language
		{"*;q=0.9, ja;q=0.8", "fr", "fr"},     // ... with its quality
		{"de;q=0, *", "de", "en"},             // the default refused: the first not refused
		{"de, de;q=0", "en", "en"},            // refused after being asked for
		{"de-AT;q=0, de;q=0.5", "en", "de"},   // only the region refused
		{"en;q=0, de;q=0, *;q=0", "en", "fr"}, // every asked language refused
		{"en;q=0,de;q=0,fr;q=0,es;q=0,ja;q=0,pt;q=0", "de", "de"},
		{"es;q=1.0", "en", "es"},
		{"es;q=0.001", "en", "es"},
		{"es;q=1.5, ja", "en", "ja"}, // bad q: that range skipped
		{"es;q=abc, ja;q=0.2", "en", "ja"},
		{"es;level=1, ja;q=0.2", "en", "ja"}, // not a q parameter
		{"es;q=0.1234", "en", "en"},          // four decimals
		{"1de, ja;q=0.3", "en", "ja"},        // a primary subtag is letters
		{"de--AT, ja;q=0.3", "en", "ja"},
		{"de-AT-1996, ja;q=0.3", "en", "de"},
		{"abcdefghi, ja;q=0.3", "en", "ja"}, // nine letters
		{"<script>, ja;q=0.3", "en", "ja"},
		{",,, ;;, ja", "en", "ja"},
		{"\x00de, fr", "en", "fr"},
		{"dé, fr", "en", "fr"},
		{strings.Repeat("xx, ", 40) + "ja", "en", "en"}, // past the ranges read
		{strings.Repeat("x", 2000) + ",ja", "en", "en"}, // past the bytes read
		{strings.Repeat("nl;q=0.5, ", 20) + "ja", "en", "ja"},
	}
	for _, tc := range tests {
		if got := Negotiate(tc.header, tc.def); got != tc.want {
			t.Errorf("Negotiate(%.60q, %q) = %q, want %q", tc.header, tc.def, got, tc.want)
		}
	}
}

func TestCatalogComplete(t *testing.T) {
	for _, lang := range Languages() {
		for k := Key(0); k < numKeys; k++ {
			text := Text(lang, k)
			if text == "" {
				t.Errorf("%s: key %d has no text", lang, k)
			}
			if w := repeatedWord(text); w != "" {
				t.Errorf("%s: key %d says %q twice in a row: %s", lang, k, w, text)
			}
			// Every placeholder of the English text is in each
			// translation, and no other.
			if got, want := placeholders(text), placeholders(Text("en", k)); got != want {
				t.Errorf("%s: key %d has placeholders %q, English has %q", lang, k, got, want)
			}
		}
	}
	if Text("en", numKeys) != "" || Text("en", -1) != "" {
		t.Error("a key out of range has a text")
	}
	if Text("xx", Title) != Text("en", Title) {
		t.Error("an unknown language does not read as English")
	}
	for _, name := range OverrideNames() {
		k, ok := OverrideKey(name)
		if !ok || placeholders(Text("en", k)) != "" {
			t.Errorf("override %q: key %d ok=%v; an overridable text must have no placeholders", name, k, ok)
		}
	}
	if _, ok := OverrideKey("announce"); ok {
		t.Error("a text with a placeholder may be overridden")
	}
}

// placeholders lists the {names} in text, in order.
func placeholders(text string) string {
	var out []string
	for {
		i := strings.IndexByte(text, '{')
		if i < 0 {
			return strings.Join(out, ",")
		}
		j := strings.IndexByte(text[i:], '}')
		if j < 0 {
			return strings.Join(out, ",") + ",unclosed"
		}
		out = append(out, text[i+1:i+j])
		text = text[i+j+1:]
	}
}

func TestNumber(t *testing.T) {
	tests := []struct {
		lang string
		n    int64
		want string
	}{
		{"en", 0, "0"},
		{"en", 999, "999"},
		{"en", 1234, "1,234"},
		{"en", 1234567, "1,234,567"},
		{"en", -1234, "-1,234"},
		{"ja", 12345, "12,345"},
		{"de", 1234, "1.234"},
		{"pt", 1234567, "1.234.567"},
		{"es", 1234, "1234"},
		{"es", 12345, "12.345"},
		{"fr", 1234, "1\u202f234"},
		{"fr", 123456, "123\u202f456"},
		{"xx", 1234, "1,234"},
	}
	for _, tc := range tests {
		if got := Number(tc.lang, tc.n); got != tc.want {
			t.Errorf("Number(%s, %d) = %q, want %q", tc.lang, tc.n, got, tc.want)
		}
	}
}

func TestWaitRange(t *testing.T) {
	m := time.Minute
	tests := []struct {
		lang        string
		least, most time.Duration
		want        string
	}{
		{"en", 8 * m, 12 * m, "8–12 minutes"},
		{"de", 8 * m, 12 * m, "8–12 Minuten"},
		{"fr", 8 * m, 12 * m, "8–12\u00a0minutes"},
		{"es", 8 * m, 12 * m, "8–12 minutos"},
		{"pt", 8 * m, 12 * m, "8–12 minutos"},
		{"ja", 8 * m, 12 * m, "8～12分"},
		{"en", 10 * time.Second, 50 * time.Second, "less than a minute"},
		{"ja", 0, 0, "1分未満"},
		{"en", 20 * time.Second, 80 * time.Second, "about 1 minute"},
		{"de", 50 * time.Second, 70 * time.Second, "etwa 1 Minute"},
		{"fr", 50 * time.Second, 70 * time.Second, "environ 1\u00a0minute"},
		{"en", 5 * m, 5 * m, "about 5 minutes"},
		{"en", 12 * m, 8 * m, "8–12 minutes"}, // swapped ends
		{"en", 100 * m, 150 * m, "2–3 hours"},
		{"es", 3 * time.Hour, 3 * time.Hour, "aprox. 3 horas"},
		{"ja", 90 * m, 3 * time.Hour, "2～3時間"},
		{"en", 1000 * time.Hour, 1500 * time.Hour, "1,000–1,500 hours"},
	}
	for _, tc := range tests {
		if got := WaitRange(tc.lang, tc.least, tc.most); got != tc.want {
			t.Errorf("WaitRange(%s, %v, %v) = %q, want %q", tc.lang, tc.least, tc.most, got, tc.want)
		}
	}
}

func TestCount(t *testing.T) {
	tests := []struct {
		lang string
		n    int64
		u    Unit
		want string
	}{
		{"en", 1, Seconds, "1 second"},
		{"en", 0, Seconds, "0 seconds"},
		{"fr", 0, Minutes, "0\u00a0minute"},
		{"pt", 1, Hours, "1 hora"},
		{"pt", 0, Days, "0 dia"},
		{"es", 2, Days, "2 días"},
		{"de", 1, Days, "1 Tag"},
		{"ja", 5, Seconds, "5秒"},
	}
	for _, tc := range tests {
		if got := Count(tc.lang, tc.n, tc.u); got != tc.want {
			t.Errorf("Count(%s, %d, %d) = %q, want %q", tc.lang, tc.n, tc.u, got, tc.want)
		}
	}
}

func TestCountdown(t *testing.T) {
	tests := []struct {
		lang string
		d    time.Duration
		want string
	}{
		{"en", 0, "any moment now"},
		{"ja", -time.Second, "まもなく"},
		{"en", 1500 * time.Millisecond, "2 seconds"},
		{"de", 5 * time.Minute, "5 Minuten"},
		{"en", 61 * time.Minute, "1 h 01 min"},
		{"ja", 125 * time.Minute, "2時間05分"},
		{"fr", 125 * time.Minute, "2\u00a0h\u00a005"},
		{"es", 72 * time.Hour, "3 días"},
	}
	for _, tc := range tests {
		if got := Countdown(tc.lang, tc.d); got != tc.want {
			t.Errorf("Countdown(%s, %v) = %q, want %q", tc.lang, tc.d, got, tc.want)
		}
	}
	if got := Moment(time.Date(2030, 5, 1, 9, 3, 0, 0, time.FixedZone("x", 3600))); got != "2030-05-01 08:03 UTC" {
		t.Errorf("Moment: %q", got)
	}
}

func TestFill(t *testing.T) {
	if got := Fill("You are number {n}.", "n", "12"); got != "You are number 12." {
		t.Error(got)
	}
	if got := Fill("no slot", "n", "12"); got != "no slot" {
		t.Error(got)
	}
}

func BenchmarkNegotiate(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if Negotiate("fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5", "en") != "fr" {
			b.Fatal("not fr")
		}
	}
}

// FuzzNegotiate: whatever the header, Negotiate answers a language the
// pages speak, and the room's own when the header names none of them.
func FuzzNegotiate(f *testing.F) {
	for _, h := range []string{"", "de-AT;q=0.9, ja;q=1, *;q=0", "fr;q=0, *", "x;q=abc, pt-BR", strings.Repeat("de;q=0.1,", 500)} {
		f.Add(h, "ja")
	}
	f.Fuzz(func(t *testing.T, header, def string) {
		got := Negotiate(header, def)
		if !Supported(got) {
			t.Fatalf("Negotiate(%q, %q) = %q, not a language the pages speak", header, def, got)
		}
		if Supported(def) && Negotiate("", def) != def {
			t.Fatalf("Negotiate(\"\", %q) = %q, not the room's language", def, Negotiate("", def))
		}
	})
}

// repeatedWord is a word text says twice in a row ("let in in the
// order"), case aside, or "".
func repeatedWord(text string) string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '{' && r != '}'
	})
	for i := 1; i < len(words); i++ {
		if words[i] == words[i-1] {
			return words[i]
		}
	}
	return ""
}
