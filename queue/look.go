package queue

// Look is how a room's visitor pages look and speak, set per room in its
// config without writing a template: the language a visitor gets when
// their browser asks for none the room speaks, the branding, and the
// operator's own words per language. Its JSON fields are the room's.
type Look struct {
	// Language is the room's default language (en, de, fr, es, ja or pt),
	// used when Accept-Language names none of them.
	Language string `json:"language"`
	// Title heads the queue page; empty keeps the built-in heading.
	Title string `json:"title"`
	// Message is the operator's note shown on the queue page.
	Message string `json:"message"`
	// LogoURL is an image the operator serves (https:// or a path on the
	// site, under a bypass rule), shown above the title.
	LogoURL string `json:"logo_url"`
	// BrandColor and BackgroundColor are CSS hex colours (#rgb or
	// #rrggbb) for the page's accents and background.
	BrandColor      string `json:"brand_color"`
	BackgroundColor string `json:"background_color"`
	// SupportLink is where a visitor can ask for help (https:// or
	// mailto:).
	SupportLink string `json:"support_link"`
	// Texts are the operator's words per language: Texts["de"]["title"]
	// replaces Title for visitors reading German.
	Texts map[string]map[string]string `json:"texts"`
}
