package fastlyhost

import (
	"context"

	"github.com/tetratelabs/wazero/api"
)

// The config store and edge dictionary calls. Viceroy makes the config
// store calls with its dictionary ones (src/wiggle_abi/config_store.rs),
// from the same stores ([local_server.config_stores] or
// [local_server.dictionaries]) and the same handle table, so a config store
// handle is a dictionary handle and the two answer alike: an unknown store
// is Badf, a missing key None.

// configStore is an open config store or dictionary handle: the store's
// items as they were at the open.
type configStore struct{ items map[string]string }

func configOpen(_ context.Context, s *state, m api.Memory, a []uint64) Status {
	name, st := readStr(m, a[0], a[1])
	if st != stOK {
		return st
	}
	items, found, err := s.host.manifest.configStore(name)
	switch {
	case !found:
		return stBadf
	case err != nil:
		// Viceroy fails the open the same way (Error::Other) when the
		// file no longer reads.
		s.host.logf("%v", err)
		return stError
	}
	return write32(m, a[2], put(s, &configStore{items: items}))
}

func configGet(_ context.Context, s *state, m api.Memory, a []uint64) Status {
	store, ok := lookup[*configStore](s, a[0])
	if !ok {
		return stBadf
	}
	key, st := readStr(m, a[1], a[2])
	if st != stOK {
		return st
	}
	v, found := store.items[key]
	if !found {
		return stNone
	}
	return writeBuf(m, a[3], a[4], a[5], []byte(v))
}

func init() {
	register(map[string]hostcall{
		"fastly_config_store.open": configOpen,
		"fastly_config_store.get":  configGet,
		"fastly_dictionary.open":   configOpen,
		"fastly_dictionary.get":    configGet,
	})
}
