package fastlyhost

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/api"
)

// The KV store calls, as Viceroy makes them (src/wiggle_abi/kv_store_impl.rs
// and src/object_store.rs). The stores live in Host.shared, seeded from the
// manifest, so writes outlive the instance that made them and every
// request of one host sees them, as in `viceroy serve`. Each operation
// happens when the guest starts it; its wait call only hands over the
// outcome, which is where a KV error (not found, precondition failed, bad
// cursor) shows, with the call itself succeeding.
//
// Where Viceroy panics (a KV store handle it never gave out, a list limit
// of 0 over a non-empty listing) the host answers Badf and Inval instead,
// the statuses the witx gives those mistakes elsewhere.

// KV error codes (the witx's $kv_error).
const (
	kvOK                 = 1
	kvBadRequest         = 2
	kvNotFound           = 3
	kvPreconditionFailed = 4
	kvInternalError      = 6
)

// stBadAlign is FastlyStatus badalign, wiggle's answer to a misaligned
// pointer to a record.
const stBadAlign Status = 6

// The insert modes (the witx's $kv_insert_mode).
const (
	kvOverwrite = iota
	kvAdd
	kvAppend
	kvPrepend
)

// The flags each call's config mask may hold; wiggle refuses any other bit
// with Inval before the call runs.
const (
	kvLookupFlags = 1 << 0
	kvDeleteFlags = 1 << 0
	kvInsertFlags = 1<<6 - 1
	kvListFlags   = 1<<4 - 1

	kvInsertMetadata          = 1 << 3
	kvInsertTTL               = 1 << 4
	kvInsertIfGenerationMatch = 1 << 5

	kvListCursor = 1 << 1
	kvListLimit  = 1 << 2
	kvListPrefix = 1 << 3
)

// kvDefaultLimit is the page size of a list that names none (Viceroy's
// kv_list in src/sandbox.rs).
const kvDefaultLimit = 1000

// kvValue is one item of a KV store.
type kvValue struct {
	body       []byte
	metadata   string
	generation uint64
	expires    time.Time // zero: never
}

func (v *kvValue) expired(now time.Time) bool {
	return !v.expires.IsZero() && !now.Before(v.expires)
}

// kvStores are a host's KV stores, safe for concurrent instances.
type kvStores struct {
	now    func() time.Time // the host's clock
	mu     sync.Mutex
	stores map[string]map[string]*kvValue
	// lastGeneration keeps generations distinct when the clock does not
	// move between two writes.
	lastGeneration uint64
}

// kvStoresOf returns h's KV stores, seeded from the manifest at first use,
// as Viceroy seeds them at start-up with overwriting inserts.
func kvStoresOf(h *Host) *kvStores {
	return shared(h, "kv_store", func() *kvStores {
		kv := &kvStores{now: h.clock, stores: map[string]map[string]*kvValue{}}
		for name, items := range h.manifest.KVStores {
			store := map[string]*kvValue{}
			for key, e := range items {
				store[key] = &kvValue{body: append([]byte(nil), e.Data...), metadata: e.Metadata, generation: kv.nextGeneration()}
			}
			kv.stores[name] = store
		}
		return kv
	})
}

// nextGeneration is the time in nanoseconds, as Viceroy's generations are,
// kept increasing. Viceroy skips 1337, which its tests use as a generation
// no item has; so does the host. The caller holds mu, or owns kv alone.
func (kv *kvStores) nextGeneration() uint64 {
	g := max(uint64(kv.now().UnixNano()), kv.lastGeneration+1)
	if g == 1337 {
		g = 1338
	}
	kv.lastGeneration = g
	return g
}

// live returns the item under key, dropping it if its time to live is over.
// The caller holds mu.
func (kv *kvStores) live(store, key string, now time.Time) *kvValue {
	v := kv.stores[store][key]
	if v != nil && v.expired(now) {
		delete(kv.stores[store], key)
		return nil
	}
	return v
}

func (kv *kvStores) lookup(store, key string) *kvValue {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	v := kv.live(store, key, kv.now())
	if v == nil {
		return nil
	}
	c := *v
	return &c
}

// kvInsert is one insert's settings.
type kvInsert struct {
	mode            uint32
	metadata        string
	ifGeneration    uint64
	hasIfGeneration bool
	ttl             time.Duration
	hasTTL          bool
}

// insert writes value under key and returns the KV error code. As in
// Viceroy, a generation to match only matters when the key exists.
func (kv *kvStores) insert(store, key string, value []byte, o kvInsert) uint32 {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	now := kv.now()
	old := kv.live(store, key, now)
	if o.hasIfGeneration && old != nil && old.generation != o.ifGeneration {
		return kvPreconditionFailed
	}
	switch {
	case o.mode == kvAdd && old != nil:
		return kvPreconditionFailed
	case o.mode == kvAppend && old != nil:
		value = append(append([]byte(nil), old.body...), value...)
	case o.mode == kvPrepend && old != nil:
		value = append(value, old.body...)
	}
	v := &kvValue{body: value, metadata: o.metadata, generation: kv.nextGeneration()}
	if o.hasTTL {
		v.expires = now.Add(o.ttl)
	}
	if kv.stores[store] == nil {
		kv.stores[store] = map[string]*kvValue{}
	}
	kv.stores[store][key] = v
	return kvOK
}

func (kv *kvStores) delete(store, key string) {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	delete(kv.stores[store], key)
}

// kvListPage is a list call's body, in Viceroy's JSON form: meta has no
// prefix when none was given, and no next_cursor on the last page.
type kvListPage struct {
	Data []string `json:"data"`
	Meta struct {
		Limit      uint32  `json:"limit"`
		Prefix     *string `json:"prefix,omitempty"`
		NextCursor *string `json:"next_cursor,omitempty"`
	} `json:"meta"`
}

// list returns one page of the store's live keys in byte order, those after
// cursor (a base64 key) and starting with prefix, or the KV error code. ok
// is false for a limit of 0 over keys to list, where Viceroy panics.
func (kv *kvStores) list(store string, cursor, prefix *string, limit uint32) (body []byte, kvErr uint32, ok bool) {
	var after string
	if cursor != nil {
		// Rust's standard base64 engine takes no line breaks, which Go's
		// decoder would skip.
		raw, err := base64.StdEncoding.Strict().DecodeString(*cursor)
		if err != nil || strings.ContainsAny(*cursor, "\r\n") || !utf8.Valid(raw) {
			return nil, kvBadRequest, true
		}
		after = string(raw)
	}
	kv.mu.Lock()
	now := kv.now()
	keys := []string{}
	for key := range kv.stores[store] {
		if kv.live(store, key, now) == nil {
			continue
		}
		if (cursor == nil || key > after) && (prefix == nil || strings.HasPrefix(key, *prefix)) {
			keys = append(keys, key)
		}
	}
	kv.mu.Unlock()
	sort.Strings(keys)
	var page kvListPage
	page.Meta.Limit, page.Meta.Prefix = limit, prefix
	if uint64(len(keys)) > uint64(limit) {
		if limit == 0 {
			return nil, 0, false
		}
		keys = keys[:limit]
		next := base64.StdEncoding.EncodeToString([]byte(keys[len(keys)-1]))
		page.Meta.NextCursor = &next
	}
	page.Data = keys
	// serde_json leaves <, > and & as they are.
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(page); err != nil {
		return nil, kvInternalError, true
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), kvOK, true
}

// kvStore is an open KV store handle.
type kvStore struct{ name string }

// The pending operations' handles, each its own kind as in Viceroy's
// handle tables, holding the operation's outcome.
type (
	kvPendingLookup struct{ value *kvValue }
	kvPendingInsert struct{ kvErr uint32 }
	kvPendingDelete struct{}
	kvPendingList   struct {
		body  []byte
		kvErr uint32
	}
)

func init() {
	register(map[string]hostcall{
		"fastly_kv_store.open": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			name, st := readStr(m, a[0], a[1])
			if st != stOK {
				return st
			}
			if !kvStoresOf(s.host).exists(name) {
				return stInval
			}
			return write32(m, a[2], put(s, &kvStore{name: name}))
		},
		"fastly_kv_store.lookup": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			if a[3]&^kvLookupFlags != 0 {
				return stInval
			}
			store, key, st := kvKey(s, m, a[0], a[1], a[2])
			if st != stOK {
				return st
			}
			return write32(m, a[5], put(s, &kvPendingLookup{value: kvStoresOf(s.host).lookup(store.name, key)}))
		},
		"fastly_kv_store.lookup_wait_v2": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			p, ok := take[*kvPendingLookup](s, a[0])
			if !ok {
				return stBadf
			}
			v := p.value
			if v == nil {
				return write32(m, a[6], kvNotFound)
			}
			b := newBody()
			b.buf.Write(v.body)
			h := s.handle()
			s.bodies[h] = b
			if st := both(write32(m, a[1], h), write32(m, a[4], uint32(len(v.metadata)))); st != stOK {
				return st
			}
			if uint64(len(v.metadata)) > a[3] {
				return stBufLen
			}
			return both(boolStatus(m.Write(u32(a[2]), []byte(v.metadata))), write64(m, a[5], v.generation), write32(m, a[6], kvOK))
		},
		"fastly_kv_store.insert": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			if a[4]&^kvInsertFlags != 0 {
				return stInval
			}
			store, key, st := kvKey(s, m, a[0], a[1], a[2])
			if st != stOK {
				return st
			}
			b, ok := s.bodies[u32(a[3])]
			if !ok {
				return stBadf
			}
			delete(s.bodies, u32(a[3]))
			r, _ := b.reader()
			value, err := io.ReadAll(r)
			if err != nil {
				s.host.logf("KV insert body: %v", err)
				return stError
			}
			o, st := kvInsertConfig(m, a[4], a[5])
			if st != stOK {
				return st
			}
			kvErr := kvStoresOf(s.host).insert(store.name, key, value, o)
			return write32(m, a[6], put(s, &kvPendingInsert{kvErr: kvErr}))
		},
		"fastly_kv_store.insert_wait": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			p, ok := take[*kvPendingInsert](s, a[0])
			if !ok {
				return stBadf
			}
			return write32(m, a[1], p.kvErr)
		},
		"fastly_kv_store.delete": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			if a[3]&^kvDeleteFlags != 0 {
				return stInval
			}
			store, key, st := kvKey(s, m, a[0], a[1], a[2])
			if st != stOK {
				return st
			}
			// Deleting a missing key succeeds, as in Viceroy.
			kvStoresOf(s.host).delete(store.name, key)
			return write32(m, a[5], put(s, &kvPendingDelete{}))
		},
		"fastly_kv_store.delete_wait": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			if _, ok := take[*kvPendingDelete](s, a[0]); !ok {
				return stBadf
			}
			return write32(m, a[1], kvOK)
		},
		"fastly_kv_store.list": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			store, ok := lookup[*kvStore](s, a[0])
			if !ok {
				return stBadf
			}
			mask := a[1]
			if mask&^kvListFlags != 0 {
				return stInval
			}
			conf, st := readRecord(m, a[2], 24, 4)
			if st != stOK {
				return st
			}
			field := func(off int) uint32 { return binary.LittleEndian.Uint32(conf[off:]) }
			if field(0) > 1 { // the mode, strong or eventual: alike here
				return stInval
			}
			opt := func(flag uint64, off int) (*string, Status) {
				if mask&flag == 0 {
					return nil, stOK
				}
				if field(off+4) == 0 {
					return nil, stInval
				}
				v, st := readStr(m, uint64(field(off)), uint64(field(off+4)))
				return &v, st
			}
			cursor, st1 := opt(kvListCursor, 4)
			prefix, st2 := opt(kvListPrefix, 16)
			if st := both(st1, st2); st != stOK {
				return st
			}
			limit := uint32(kvDefaultLimit)
			if mask&kvListLimit != 0 {
				limit = field(12)
			}
			body, kvErr, ok := kvStoresOf(s.host).list(store.name, cursor, prefix, limit)
			if !ok {
				return stInval
			}
			return write32(m, a[3], put(s, &kvPendingList{body: body, kvErr: kvErr}))
		},
		"fastly_kv_store.list_wait": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			p, ok := take[*kvPendingList](s, a[0])
			if !ok {
				return stBadf
			}
			if p.kvErr != kvOK {
				return write32(m, a[2], p.kvErr)
			}
			b := newBody()
			b.buf.Write(p.body)
			h := s.handle()
			s.bodies[h] = b
			return both(write32(m, a[1], h), write32(m, a[2], kvOK))
		},
	})
}

// exists reports whether the host has a KV store called name.
func (kv *kvStores) exists(name string) bool {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	_, found := kv.stores[name]
	return found
}

// kvKey resolves a call's store handle and reads its key, which must be
// valid UTF-8 and a valid KV key (else Inval, Viceroy's BadRequest status).
func kvKey(s *state, m api.Memory, storeH, keyPtr, keyLen uint64) (*kvStore, string, Status) {
	store, ok := lookup[*kvStore](s, storeH)
	if !ok {
		return nil, "", stBadf
	}
	key, st := readStr(m, keyPtr, keyLen)
	if st != stOK {
		return nil, "", st
	}
	if validKVKey(key) != nil {
		return nil, "", stInval
	}
	return store, key, stOK
}

// kvInsertConfig reads an insert's $kv_insert_config record: mode u32,
// unused u32, metadata pointer and length, time_to_live_sec u32, then
// if_generation_match u64 at offset 24. As in Viceroy, the mode always
// counts, a flagged metadata must be non-empty UTF-8, and a flagged time to
// live of 0 makes the item expire at once.
func kvInsertConfig(m api.Memory, mask, ptr uint64) (kvInsert, Status) {
	conf, st := readRecord(m, ptr, 32, 8)
	if st != stOK {
		return kvInsert{}, st
	}
	field := func(off int) uint32 { return binary.LittleEndian.Uint32(conf[off:]) }
	o := kvInsert{mode: field(0)}
	if o.mode > kvPrepend {
		return kvInsert{}, stInval
	}
	if mask&kvInsertIfGenerationMatch != 0 {
		o.ifGeneration, o.hasIfGeneration = binary.LittleEndian.Uint64(conf[24:]), true
	}
	if mask&kvInsertMetadata != 0 {
		if field(12) == 0 {
			return kvInsert{}, stInval
		}
		meta, st := readStr(m, uint64(field(8)), uint64(field(12)))
		if st != stOK {
			return kvInsert{}, st
		}
		o.metadata = meta
	}
	if mask&kvInsertTTL != 0 {
		o.ttl, o.hasTTL = time.Duration(field(16))*time.Second, true
	}
	return o, stOK
}

// take removes and returns the object of type T under handle h, as a wait
// call consumes its pending operation.
func take[T any](s *state, h uint64) (T, bool) {
	v, ok := lookup[T](s, h)
	if ok {
		delete(s.objects, u32(h))
	}
	return v, ok
}

// readStr reads a guest string: Inval when out of bounds or not UTF-8, as
// wiggle's as_str answers.
func readStr(m api.Memory, ptr, n uint64) (string, Status) {
	b, ok := read(m, ptr, n)
	if !ok || !utf8.Valid(b) {
		return "", stInval
	}
	return string(b), stOK
}

// readRecord reads a guest record of size bytes at ptr, which must be
// aligned to align (wiggle's BadAlign) and in bounds (Inval).
func readRecord(m api.Memory, ptr uint64, size, align uint32) ([]byte, Status) {
	if u32(ptr)%align != 0 {
		return nil, stBadAlign
	}
	b, ok := read(m, ptr, uint64(size))
	if !ok {
		return nil, stInval
	}
	return b, stOK
}
