package queue

import (
	"errors"
	"strings"
	"testing"
)

func TestLookValidation(t *testing.T) {
	long := strings.Repeat("é", maxTitle+1)
	tests := []struct {
		name, look, wantErr string
	}{
		{"none", ``, ""},
		{"full", `"language":"de","title":"Shop","message":"Big sale","logo_url":"https://cdn.example.com/logo.svg",
			"brand_color":"#7A1F5C","background_color":"#fff","support_link":"mailto:help@example.com",
			"texts":{"en":{"title":"Shop","message":"Big sale","turn":"You go on to the shop."},"ja":{"closed_text":"閉店中"}}`, ""},
		{"logo path", `"logo_url":"/static/logo.png","support_link":"https://help.example.com/"`, ""},
		{"dark page", `"background_color":"#101418","brand_color":"#8ab4f8"`, ""},
		{"language", `"language":"nl"`, `language: must be one of en, de, fr, es, ja, pt, got "nl"`},
		{"language with region", `"language":"de-AT"`, `language: must be one of`},
		{"title too long", `"title":"` + long + `"`, "title: 121 characters, the limit is 120"},
		{"title control", `"title":"a\u0007b"`, "title: \"a\\ab\" holds a control character"},
		{"title line break", `"title":"a\nb"`, "title:"},
		{"message too long", `"message":"` + strings.Repeat("x", maxText+1) + `"`, "message: 1001 characters"},
		{"logo javascript", `"logo_url":"javascript:alert(1)"`, `logo_url: "javascript:alert(1)" must be an https:// URL or a path`},
		{"logo http", `"logo_url":"http://example.com/x.png"`, "logo_url:"},
		{"logo other site", `"logo_url":"//evil.example/x.png"`, "logo_url:"},
		{"logo backslash", `"logo_url":"/\\evil.example/x.png"`, "logo_url:"},
		{"logo no host", `"logo_url":"https:///x.png"`, "logo_url:"},
		{"logo quote", `"logo_url":"https://a.example/\" onerror=\"x"`, `logo_url: "https://a.example/\" onerror=\"x" holds '"'`},
		{"logo space", `"logo_url":"https://a.example/a b.png"`, "which a URL must percent-encode"},
		{"logo long", `"logo_url":"https://a.example/` + strings.Repeat("a", maxURL) + `"`, "logo_url: 2018 bytes, the limit is 2000"},
		{"support data", `"support_link":"data:text/html,hi"`, `support_link: "data:text/html,hi" must be an https:// URL or a mailto: address`},
		{"support mailto without address", `"support_link":"mailto:"`, "support_link:"},
		{"brand not hex", `"brand_color":"red"`, `brand_color: "red" must be a hex colour`},
		{"background not hex", `"background_color":"#12345"`, `background_color: "#12345" must be a hex colour`},
		{"brand too pale", `"brand_color":"#eeeeee"`, "brand_color: #eeeeee against background_color #ffffff has a contrast of 1.16:1; the progress bar needs at least 3:1"},
		{"pair too close", `"brand_color":"#333","background_color":"#222"`, "brand_color: #333333 against background_color #222222"},
		{"background near the default brand", `"background_color":"#1a56db"`, "brand_color: #1a56db against background_color #1a56db"},
		{"texts language", `"texts":{"nl":{"title":"x"}}`, `texts: "nl" is not a language the pages speak`},
		{"texts key", `"texts":{"de":{"announce":"x"}}`, `texts.de: "announce" is not a text the pages let you replace; use one of message, title, turn`},
		{"texts title long", `"texts":{"de":{"title":"` + long + `"}}`, "texts.de.title: 121 characters"},
		{"texts control", `"texts":{"fr":{"message":"a\u001bb"}}`, "texts.fr.message:"},
		{"texts not strings", `"texts":{"fr":{"message":1}}`, "texts"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := `{"paths":["/"],"max_active_users":5`
			if tc.look != "" {
				doc += "," + tc.look
			}
			_, err := ParseRoom("shop", []byte(doc+"}"))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalidRoom) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestLookText(t *testing.T) {
	l := Look{Title: "Shop", Message: "Sale today", Texts: map[string]map[string]string{
		"de": {"title": "Laden", "message": "Heute Sale", "turn": "Dann geht's weiter."},
		"ja": {"title": ""},
	}}
	tests := []struct{ lang, name, want string }{
		{"de", "title", "Laden"},
		{"de", "message", "Heute Sale"},
		{"de", "turn", "Dann geht's weiter."},
		{"de", "keep", "Lassen Sie diese Seite geöffnet: Wer sie länger als ein paar Minuten verlässt, verliert seinen Platz."},
		{"en", "title", "Shop"},
		{"ja", "title", "Shop"}, // an empty override keeps the room's
		{"fr", "message", "Sale today"},
		{"fr", "nope", ""},
	}
	for _, tc := range tests {
		if got := l.Text(tc.lang, tc.name); got != tc.want {
			t.Errorf("Text(%s, %s) = %q, want %q", tc.lang, tc.name, got, tc.want)
		}
	}
	if got := (&Look{}).Text("fr", "title"); got != "Vous êtes dans la file d’attente" {
		t.Errorf("built-in title: %q", got)
	}
}

func TestLookColours(t *testing.T) {
	bg, brand, text, onBrand := (&Look{}).Colours()
	if bg.Hex() != DefaultBackground || brand.Hex() != DefaultBrand || text.Hex() != "#000000" || onBrand.Hex() != "#ffffff" {
		t.Errorf("defaults: %s %s %s %s", bg.Hex(), brand.Hex(), text.Hex(), onBrand.Hex())
	}
	bg, brand, text, onBrand = (&Look{BackgroundColor: "#101418", BrandColor: "#8AB4F8"}).Colours()
	if bg.Hex() != "#101418" || brand.Hex() != "#8ab4f8" || text.Hex() != "#ffffff" || onBrand.Hex() != "#000000" {
		t.Errorf("dark: %s %s %s %s", bg.Hex(), brand.Hex(), text.Hex(), onBrand.Hex())
	}
}
