package edge

import (
	"errors"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/templates"
)

// DefaultKeptFor is how long a reused sandbox trusts a secret or a template
// it has read: an operator's change to the secret or KV store takes effect
// within it.
const DefaultKeptFor = 5 * time.Second

// Kept is what one sandbox keeps between the requests it serves
// (fsthttp.ServeMany): the parsed settings and rooms, the signing keys, the
// templates, and what the secret and KV stores answered. Nothing in it is
// about a visitor; a request's own state lives in its request. The config
// store is read at every request and parsed again only when a value it
// read has changed, so a change there takes effect at the next request;
// secrets and templates are read again after For.
//
// A sandbox serves one request at a time, so Kept needs no lock.
type Kept struct {
	// For is how long secrets and templates are kept; 0 means
	// DefaultKeptFor.
	For time.Duration

	settings  *keptSettings
	secrets   map[string]kept[[]byte]
	templates map[string]kept[string]
	keys      *keptKeys
	parsed    map[string]keptTemplate // by page kind and template name
}

// kept is a store's answer, and when it was read.
type kept[T any] struct {
	v   T
	err error // nil or ErrNotFound: other failures are not kept
	at  time.Time
}

// keptSettings are settings and the config values they were made from, in
// the order LoadSettings read them.
type keptSettings struct {
	settings Settings
	reads    []configRead
}

// configRead is one value LoadSettings read; found is false for a missing
// key.
type configRead struct {
	key, v string
	found  bool
}

// keptKeys is a key set and the secret it was parsed from.
type keptKeys struct {
	raw  string
	keys *queue.KeySet
}

// keptTemplate is a parsed template and its source.
type keptTemplate struct {
	src string
	t   *templates.Template
}

func (k *Kept) keepFor() time.Duration {
	if k.For > 0 {
		return k.For
	}
	return DefaultKeptFor
}

// Settings returns LoadSettings(c), parsing again only when a value it
// read last time reads differently now. Settings that met a failure other
// than a missing key are not kept, so the next request tries again.
func (k *Kept) Settings(c Config) Settings {
	if ks := k.settings; ks != nil && ks.current(c) {
		return ks.settings
	}
	rec := &recordingConfig{c: c}
	s := LoadSettings(rec)
	k.settings = nil
	if !rec.failed {
		k.settings = &keptSettings{settings: s, reads: rec.reads}
	}
	return s
}

// current reports whether c still holds every value the settings were made
// from. LoadSettings reads the same keys as long as they hold the same
// values, so checking those keys is enough.
func (ks *keptSettings) current(c Config) bool {
	for _, r := range ks.reads {
		v, err := c.Get(r.key)
		switch {
		case errors.Is(err, ErrNotFound):
			if r.found {
				return false
			}
		case err != nil, !r.found, v != r.v:
			return false
		}
	}
	return true
}

// recordingConfig is a Config that notes what it answered.
type recordingConfig struct {
	c      Config
	reads  []configRead
	failed bool
}

func (r *recordingConfig) Get(key string) (string, error) {
	v, err := r.c.Get(key)
	switch {
	case err == nil:
		r.reads = append(r.reads, configRead{key: key, v: v, found: true})
	case errors.Is(err, ErrNotFound):
		r.reads = append(r.reads, configRead{key: key})
	default:
		r.failed = true
	}
	return v, err
}

// fresh reports whether e, read at e.at, may still be used at now.
func (k *Kept) fresh(at, now time.Time) bool {
	return !now.Before(at) && now.Sub(at) < k.keepFor()
}

// keptSecrets is a Secrets that answers from Kept while its answers are
// fresh.
type keptSecrets struct {
	k    *Kept
	from Secrets
	now  time.Time
}

func (s keptSecrets) Get(name string) ([]byte, error) {
	if e, ok := s.k.secrets[name]; ok && s.k.fresh(e.at, s.now) {
		return e.v, e.err
	}
	v, err := s.from.Get(name)
	if err == nil || errors.Is(err, ErrNotFound) {
		if s.k.secrets == nil {
			s.k.secrets = map[string]kept[[]byte]{}
		}
		s.k.secrets[name] = kept[[]byte]{v: v, err: err, at: s.now}
	}
	return v, err
}

// keptTemplates is a Templates that answers from Kept while its answers
// are fresh.
type keptTemplates struct {
	k    *Kept
	from Templates
	now  time.Time
}

func (t keptTemplates) Get(name string) (string, error) {
	if e, ok := t.k.templates[name]; ok && t.k.fresh(e.at, t.now) {
		return e.v, e.err
	}
	v, err := t.from.Get(name)
	if err == nil || errors.Is(err, ErrNotFound) {
		if t.k.templates == nil {
			t.k.templates = map[string]kept[string]{}
		}
		t.k.templates[name] = kept[string]{v: v, err: err, at: t.now}
	}
	return v, err
}

// keySet parses raw, or returns the key set parsed from the same raw last
// time.
func (k *Kept) keySet(raw string) (*queue.KeySet, error) {
	if k.keys != nil && k.keys.raw == raw {
		return k.keys.keys, nil
	}
	keys, err := queue.ParseKeySet(raw)
	if err != nil {
		return nil, err
	}
	k.keys = &keptKeys{raw: raw, keys: keys}
	return keys, nil
}

// parse parses src as the template called name of page kind, or returns
// what the same source parsed to last time.
func (k *Kept) parse(kind templates.Page, name, src string) (*templates.Template, error) {
	id := kind.Name + "\x00" + name
	if e, ok := k.parsed[id]; ok && e.src == src {
		return e.t, nil
	}
	t, err := kind.Parse(src)
	if err != nil {
		return nil, err
	}
	if k.parsed == nil {
		k.parsed = map[string]keptTemplate{}
	}
	k.parsed[id] = keptTemplate{src: src, t: t}
	return t, nil
}

// keep makes the request read the secret and KV stores through Kept.
func (q *request) keep() {
	q.secrets, q.templates = q.Secrets, q.Templates
	if q.Kept == nil {
		return
	}
	if q.Secrets != nil {
		q.secrets = keptSecrets{k: q.Kept, from: q.Secrets, now: q.now}
	}
	if q.Templates != nil {
		q.templates = keptTemplates{k: q.Kept, from: q.Templates, now: q.now}
	}
}

// loadSettings reads the config store, through Kept when there is one.
func (q *request) loadSettings() Settings {
	if q.Kept == nil {
		return LoadSettings(q.Config)
	}
	return q.Kept.Settings(q.Config)
}

// parseKeys parses the signing keys, through Kept when there is one.
func (h *Handler) parseKeys(raw string) (*queue.KeySet, error) {
	if h.Kept == nil {
		return queue.ParseKeySet(raw)
	}
	return h.Kept.keySet(raw)
}

// parseTemplate parses a template, through Kept when there is one.
func (h *Handler) parseTemplate(kind templates.Page, name, src string) (*templates.Template, error) {
	if h.Kept == nil {
		return kind.Parse(src)
	}
	return h.Kept.parse(kind, name, src)
}
