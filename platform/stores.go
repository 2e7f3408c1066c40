package platform

import (
	"errors"
	"fmt"
	"io"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/fastly/compute-sdk-go/configstore"
	"github.com/fastly/compute-sdk-go/kvstore"
	"github.com/fastly/compute-sdk-go/secretstore"
)

// config reads the config store, opening it on first use.
type config struct{ store *configstore.Store }

func (c *config) Get(key string) (string, error) {
	if c.store == nil {
		s, err := configstore.Open(edge.ConfigStore)
		if errors.Is(err, configstore.ErrStoreNotFound) {
			return "", fmt.Errorf("config store %s: %w", edge.ConfigStore, edge.ErrStoreNotLinked)
		}
		if err != nil {
			return "", fmt.Errorf("config store %s: %w", edge.ConfigStore, err)
		}
		c.store = s
	}
	v, err := c.store.Get(key)
	if errors.Is(err, configstore.ErrKeyNotFound) {
		return "", edge.ErrNotFound
	}
	return v, err
}

// maxTemplateBytes stops a huge KV value from being read at all; the
// template parser refuses anything this large anyway.
const maxTemplateBytes = 256<<10 + 1

// kvTemplates reads templates from the KV store, opening it on first use.
type kvTemplates struct{ store *kvstore.Store }

func (t *kvTemplates) Get(name string) (string, error) {
	if t.store == nil {
		s, err := kvstore.Open(edge.TemplateStore)
		if err != nil {
			return "", fmt.Errorf("kv store %s: %w", edge.TemplateStore, err)
		}
		t.store = s
	}
	e, err := t.store.Lookup(name)
	if errors.Is(err, kvstore.ErrKeyNotFound) {
		return "", edge.ErrNotFound
	}
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(e, maxTemplateBytes))
	return string(b), err
}

// secrets reads the secret store.
type secrets struct{}

func (secrets) Get(name string) ([]byte, error) {
	b, err := secretstore.Plaintext(edge.SecretStore, name)
	switch {
	case errors.Is(err, secretstore.ErrSecretNotFound):
		return nil, edge.ErrNotFound
	case errors.Is(err, secretstore.ErrSecretStoreNotFound):
		return nil, fmt.Errorf("secret store %s: %w", edge.SecretStore, edge.ErrStoreNotLinked)
	}
	return b, err
}
