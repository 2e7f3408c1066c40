package fastlyhost

import (
	"context"

	"github.com/tetratelabs/wazero/api"
)

// The secret store calls, as Viceroy makes them
// (src/wiggle_abi/secret_store_impl.rs): an unknown store or secret is
// None, a handle of the wrong kind Badf.

// secretStore is an open secret store handle.
type secretStore struct{ items map[string][]byte }

// secret is a secret handle: one from a store, or one from_bytes made.
type secret struct{ plaintext []byte }

func init() {
	register(map[string]hostcall{
		"fastly_secret_store.open": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			name, st := readStr(m, a[0], a[1])
			if st != stOK {
				return st
			}
			items, found := s.host.manifest.SecretStores[name]
			if !found {
				return stNone
			}
			return write32(m, a[2], put(s, &secretStore{items: items}))
		},
		"fastly_secret_store.get": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			store, ok := lookup[*secretStore](s, a[0])
			if !ok {
				return stBadf
			}
			name, st := readStr(m, a[1], a[2])
			if st != stOK {
				return st
			}
			v, found := store.items[name]
			if !found {
				return stNone
			}
			return write32(m, a[3], put(s, &secret{plaintext: v}))
		},
		"fastly_secret_store.plaintext": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			sec, ok := lookup[*secret](s, a[0])
			if !ok {
				return stBadf
			}
			return writeBuf(m, a[1], a[2], a[3], sec.plaintext)
		},
		// from_bytes makes a secret of the guest's bytes, for APIs that
		// take a secret handle (Viceroy's add_secret).
		"fastly_secret_store.from_bytes": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			b, ok := read(m, a[0], a[1])
			if !ok {
				return stInval
			}
			return write32(m, a[2], put(s, &secret{plaintext: b}))
		},
	})
}
