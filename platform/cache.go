package platform

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/fastly/compute-sdk-go/cache/simple"
)

// maxCacheValue bounds what is read back from the cache: a snapshot is a
// line of numbers, so more than this is not one of ours.
const maxCacheValue = 4096

// popCache is Fastly's cache in the POP serving the request. Its
// transactions collapse concurrent misses of a key into one fill, which
// is what makes a snapshot cost one store call per POP.
type popCache struct{}

func (popCache) Purge(key string) error {
	return simple.Purge([]byte(key), simple.PurgeOptions{Scope: simple.PurgeScopeGlobal})
}

func (popCache) GetOrSet(key string, fill func() ([]byte, time.Duration, error)) ([]byte, error) {
	body, err := simple.GetOrSet([]byte(key), func() (simple.CacheEntry, error) {
		b, ttl, err := fill()
		if err != nil {
			return simple.CacheEntry{}, err
		}
		return simple.CacheEntry{Body: bytes.NewReader(b), TTL: ttl}, nil
	})
	if err != nil {
		return nil, err
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, maxCacheValue+1))
	if err == nil && len(b) > maxCacheValue {
		err = fmt.Errorf("cache value %q is over %d bytes", key, maxCacheValue)
	}
	return b, err
}
