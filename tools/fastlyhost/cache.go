package fastlyhost

import (
	"context"
	"encoding/binary"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/api"
)

// The core cache calls (fastly_cache) and purging (fastly_purge), as the
// SDK's cache/core and cache/simple packages use them, over the POP's
// cache (cachestore.go): each Host is one POP with its own cache, shared
// by all its instances and by nobody else.
//
// Semantics are Viceroy's (src/wiggle_abi/cache.rs), which follows
// Fastly's documented ones: get_state reports found (and usable) only for
// a usable object, stale when it is past its max age; a found object hands
// out one body at a time (a second get_body while the first body is open
// is Badf); get_body's range is Viceroy's (from and to inclusive; to
// alone counts from the end; an invalid range, or one over an object of
// unknown length without always_use_requested_range, gives the whole
// body); transaction_insert and transaction_update need the obligation
// (Badf otherwise), and update a found object too; request headers are
// for the lookup and the non-transactional insert only (Inval elsewhere).
//
// Where it differs from Viceroy: get_stale_while_revalidate_ns and
// get_hits answer, as the platform does, where Viceroy answers Unsupported
// (which makes the SDK's every lookup fail there); a lookup that finds an
// object counts as a hit, and get_hits reports the count as of that
// lookup. Where it differs from both: vary rules are accepted but not
// applied (a key holds one object whatever the request headers; the host
// logs it), and memory is bounded (cachestore.go).

// The option bits the SDK passes (internal/abi/fastly/types.go).
const (
	lookupRequestHeaders = 1 << 1
	lookupServiceID      = 1 << 2
	lookupAlwaysUseRange = 1 << 3

	writeRequestHeaders = 1 << 1
	writeVaryRule       = 1 << 2
	writeInitialAge     = 1 << 3
	writeSWR            = 1 << 4
	writeSurrogateKeys  = 1 << 5
	writeLength         = 1 << 6
	writeUserMetadata   = 1 << 7
	writeSensitiveData  = 1 << 8
	writeKnown          = writeRequestHeaders | writeVaryRule | writeInitialAge | writeSWR | writeSurrogateKeys | writeLength | writeUserMetadata | writeSensitiveData

	bodyFrom = 1 << 1
	bodyTo   = 1 << 2

	purgeSoft = 1 << 0
)

// The lookup state bits.
const (
	stateFound              = 1 << 0
	stateUsable             = 1 << 1
	stateStale              = 1 << 2
	stateMustInsertOrUpdate = 1 << 3
)

// cacheEntry is what a cache handle holds: a lookup's result.
type cacheEntry struct {
	key         string
	found       *cacheObject // nil: nothing found
	hits        uint64       // the object's hits as of the lookup
	length      int64        // its length as known at the lookup, or -1
	ob          *cacheObligation
	alwaysRange bool
	// lastBody is the body get_body last handed out, under handle
	// lastHandle.
	lastBody   *body
	lastHandle uint32
}

// reading reports whether the body get_body last handed out is still
// open: a found object has one body at a time.
func (e *cacheEntry) reading(s *state) bool {
	b := e.lastBody
	if b == nil || s.bodies[e.lastHandle] != b {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.closed
}

// cacheOf returns the Host's (the POP's) cache.
func cacheOf(h *Host) *cacheStore {
	return shared(h, "fastly_cache", func() *cacheStore {
		return newCacheStore(h.clock, defaultCacheBytes, defaultCacheEntryBytes)
	})
}

// cacheCall is one cache host call, with the call's name for log lines.
type cacheCall func(ctx context.Context, s *state, m api.Memory, a []uint64, name string) Status

func init() {
	calls := map[string]cacheCall{
		"lookup":                             cacheLookup(false),
		"transaction_lookup":                 cacheLookup(true),
		"insert":                             cacheInsert,
		"transaction_insert":                 cacheTransactionInsert(false),
		"transaction_insert_and_stream_back": cacheTransactionInsert(true),
		"transaction_update":                 cacheUpdate,
		"transaction_cancel":                 cacheGiveUp(false),
		"close":                              cacheGiveUp(true),
		"get_state":                          cacheState,
		"get_user_metadata":                  cacheUserMetadata,
		"get_body":                           cacheGetBody,
		"get_length": cacheNumber(func(_ time.Time, e *cacheEntry) (uint64, bool) {
			return uint64(e.length), e.length >= 0
		}),
		"get_max_age_ns": cacheNumber(func(_ time.Time, e *cacheEntry) (uint64, bool) {
			return uint64(e.found.maxAge), true
		}),
		"get_stale_while_revalidate_ns": cacheNumber(func(_ time.Time, e *cacheEntry) (uint64, bool) {
			return uint64(e.found.swr), true
		}),
		"get_age_ns": cacheNumber(func(now time.Time, e *cacheEntry) (uint64, bool) {
			return uint64(e.found.age(now)), true
		}),
		"get_hits": cacheNumber(func(_ time.Time, e *cacheEntry) (uint64, bool) { return e.hits, true }),
	}
	family := map[string]hostcall{"fastly_purge.purge_surrogate_key": purgeSurrogateKey}
	for name, call := range calls {
		full := "fastly_cache." + name
		family[full] = func(ctx context.Context, s *state, m api.Memory, a []uint64) Status {
			return call(ctx, s, m, a, full)
		}
	}
	register(family)
}

// cacheLookup is lookup(key_ptr, key_len, mask, options, handle_out), or
// transaction_lookup, which joins request collapsing.
func cacheLookup(transaction bool) cacheCall {
	return func(ctx context.Context, s *state, m api.Memory, a []uint64, name string) Status {
		key, st := cacheKeyArg(s, m, a[0], a[1], name)
		if st != stOK {
			return st
		}
		alwaysRange, st := lookupOptions(s, m, a[2], a[3], name)
		if st != stOK {
			return st
		}
		c := cacheOf(s.host)
		e := &cacheEntry{key: key, alwaysRange: alwaysRange, length: -1}
		if transaction {
			var err error
			if e.found, e.hits, e.ob, err = c.transactionLookup(ctx, key); err != nil {
				s.host.logf("%s: waiting for another transaction on the key: %v", name, err)
				return stError
			}
		} else {
			e.found, e.hits = c.lookup(key)
		}
		if e.found != nil {
			e.length = e.found.knownLength()
		}
		return write32(m, a[4], put(s, e))
	}
}

// cacheInsert is insert(key_ptr, key_len, mask, options, body_out): a
// non-transactional insert, the last writer winning.
func cacheInsert(ctx context.Context, s *state, m api.Memory, a []uint64, name string) Status {
	key, st := cacheKeyArg(s, m, a[0], a[1], name)
	if st != stOK {
		return st
	}
	w, st := writeOptions(s, m, a[2], a[3], name, true)
	if st != stOK {
		return st
	}
	o, err := cacheOf(s.host).insert(key, w, nil)
	if err != nil {
		s.host.logf("%s: %v: LimitExceeded", name, err)
		return stLimitExceeded
	}
	return write32(m, a[4], writerBody(ctx, s, o))
}

// cacheTransactionInsert is transaction_insert(handle, mask, options,
// body_out), and transaction_insert_and_stream_back, which also returns a
// handle to read the object back as it is written.
func cacheTransactionInsert(streamBack bool) cacheCall {
	return func(ctx context.Context, s *state, m api.Memory, a []uint64, name string) Status {
		e, ok := lookup[*cacheEntry](s, a[0])
		if !ok {
			return stBadf
		}
		w, st := writeOptions(s, m, a[1], a[2], name, false)
		if st != stOK {
			return st
		}
		if e.ob == nil {
			s.host.logf("%s: the transaction has no obligation to insert: Badf", name)
			return stBadf
		}
		o, err := cacheOf(s.host).insert(e.key, w, e.ob)
		if err != nil {
			s.host.logf("%s: %v: LimitExceeded", name, err)
			return stLimitExceeded
		}
		e.ob = nil
		if st := write32(m, a[3], writerBody(ctx, s, o)); st != stOK || !streamBack {
			return st
		}
		back := &cacheEntry{key: e.key, found: o, length: o.knownLength(), alwaysRange: e.alwaysRange}
		return write32(m, a[4], put(s, back))
	}
}

// cacheUpdate is transaction_update(handle, mask, options): the found,
// stale object freshened with new metadata, its body kept.
func cacheUpdate(_ context.Context, s *state, m api.Memory, a []uint64, name string) Status {
	e, ok := lookup[*cacheEntry](s, a[0])
	if !ok {
		return stBadf
	}
	w, st := writeOptions(s, m, a[1], a[2], name, false)
	if st != stOK {
		return st
	}
	if e.ob == nil || e.found == nil {
		s.host.logf("%s: the transaction has no found object to update: Badf", name)
		return stBadf
	}
	cacheOf(s.host).update(e.ob, e.found, w)
	e.ob = nil
	return stOK
}

// cacheGiveUp is transaction_cancel(handle) (closing false) and
// close(handle) (closing true): both give up the obligation to insert, for
// a waiting transaction to take. Cancelling without one is a guest's
// mistake (Badf); closing also frees the handle, obligation or not.
func cacheGiveUp(closing bool) cacheCall {
	return func(_ context.Context, s *state, _ api.Memory, a []uint64, name string) Status {
		e, ok := lookup[*cacheEntry](s, a[0])
		if !ok {
			return stBadf
		}
		if e.ob == nil && !closing {
			s.host.logf("%s: the transaction has no obligation to cancel: Badf", name)
			return stBadf
		}
		if e.ob != nil {
			cacheOf(s.host).release(e.ob)
			e.ob = nil
		}
		if closing {
			delete(s.objects, u32(a[0]))
		}
		return stOK
	}
}

// cacheState is get_state(handle, state_out).
func cacheState(_ context.Context, s *state, m api.Memory, a []uint64, _ string) Status {
	e, ok := lookup[*cacheEntry](s, a[0])
	if !ok {
		return stBadf
	}
	var st uint32
	if e.found != nil {
		c := cacheOf(s.host)
		c.mu.Lock()
		now := c.clock()
		fresh, usable := e.found.fresh(now), e.found.usable(now)
		c.mu.Unlock()
		if usable {
			st |= stateFound | stateUsable
			if !fresh {
				st |= stateStale
			}
		}
	}
	if e.ob != nil {
		st |= stateMustInsertOrUpdate
	}
	return write32(m, a[1], st)
}

// cacheUserMetadata is get_user_metadata(handle, ptr, len, nwritten_out).
func cacheUserMetadata(_ context.Context, s *state, m api.Memory, a []uint64, _ string) Status {
	e, ok := lookup[*cacheEntry](s, a[0])
	if !ok {
		return stBadf
	}
	if e.found == nil {
		return stNone
	}
	return writeBuf(m, a[1], a[2], a[3], e.found.userMetadata)
}

// cacheNumber makes the get_* calls that answer one u64 about the found
// object (handle, out): value returns it, or false for None.
func cacheNumber(value func(now time.Time, e *cacheEntry) (uint64, bool)) cacheCall {
	return func(_ context.Context, s *state, m api.Memory, a []uint64, _ string) Status {
		e, ok := lookup[*cacheEntry](s, a[0])
		if !ok {
			return stBadf
		}
		if e.found == nil {
			return stNone
		}
		v, known := value(cacheOf(s.host).clock(), e)
		if !known {
			return stNone
		}
		return write64(m, a[1], v)
	}
}

// cacheGetBody is get_body(handle, mask, options, body_out).
func cacheGetBody(ctx context.Context, s *state, m api.Memory, a []uint64, name string) Status {
	e, ok := lookup[*cacheEntry](s, a[0])
	if !ok {
		return stBadf
	}
	mask := u32(a[1])
	if mask&^(bodyFrom|bodyTo) != 0 {
		s.host.logf("%s: unknown option bits %#x: Unsupported", name, mask&^(bodyFrom|bodyTo))
		return stUnsupported
	}
	raw, ok := m.Read(u32(a[2]), 16)
	if !ok {
		return stInval
	}
	if e.found == nil {
		return stNone
	}
	if e.reading(s) {
		s.host.logf("%s: the object's previous body is still open: Badf", name)
		return stBadf
	}
	from, to := int64(-1), int64(-1)
	if mask&bodyFrom != 0 {
		from = clampI64(binary.LittleEndian.Uint64(raw[0:]))
	}
	if mask&bodyTo != 0 {
		to = clampI64(binary.LittleEndian.Uint64(raw[8:]))
	}
	r, err := e.bodyRange(ctx, from, to)
	if err != nil {
		s.host.logf("%s: %v", name, err)
		return stError
	}
	b := newBody()
	b.src = r
	if n, whole := e.found.body.complete(); whole {
		end := n
		if r.end >= 0 {
			end = min(end, r.end)
		}
		b.srcLen = max(end-r.pos, 0)
	}
	h := s.handle()
	s.bodies[h] = b
	e.lastBody, e.lastHandle = b, h
	return write32(m, a[3], h)
}

func clampI64(v uint64) int64 { return int64(min(v, math.MaxInt64)) }

// bodyRange is Viceroy's GetBodyBuilder::build: from and to are
// inclusive offsets, -1 when not given.
func (e *cacheEntry) bodyRange(ctx context.Context, from, to int64) (*cacheReader, error) {
	b := e.found.body
	whole := &cacheReader{ctx: ctx, b: b, end: -1}
	length := e.found.knownLength()
	valid := true
	if length >= 0 {
		switch {
		case from < 0 && to >= 0:
			valid = to >= 1 && to <= length
		case from >= 0 && to >= 0:
			valid = from < length && to >= from && to < length
		case from >= 0:
			valid = from < length
		}
	}
	if (!e.alwaysRange && length < 0) || (from < 0 && to < 0) || !valid {
		return whole, nil
	}
	start, end := from, to
	if from < 0 {
		// to alone counts from the end, which the whole body tells.
		if length < 0 {
			n, _, err := b.waitFor(ctx, math.MaxInt64)
			if err != nil {
				return nil, err
			}
			length = n
		}
		if to > length {
			return whole, nil
		}
		start, end = length-to, -1
	}
	if length < 0 {
		if _, _, err := b.waitFor(ctx, start+1); err != nil {
			return nil, err
		}
	}
	if end >= 0 {
		end++
	}
	return &cacheReader{ctx: ctx, b: b, pos: start, end: end}, nil
}

// writerBody returns the handle of a body whose bytes go into o. Closing
// it completes the object; abandoning it, or ending the instance without
// closing it, drops the object.
func writerBody(ctx context.Context, s *state, o *cacheObject) uint32 {
	b := newBody()
	b.sink = o.body
	stop := context.AfterFunc(ctx, func() { o.body.fail(errCacheAbandoned) })
	b.close = func(abandoned bool) {
		stop()
		if abandoned {
			o.body.fail(errCacheAbandoned)
			return
		}
		if err := o.body.finish(); err != nil {
			s.host.logf("fastly_http_body.close: %v", err)
		}
	}
	h := s.handle()
	s.bodies[h] = b
	return h
}

// cacheKeyArg reads a cache key: up to 4 KiB.
func cacheKeyArg(s *state, m api.Memory, ptr, n uint64, name string) (string, Status) {
	if n > cacheMaxKey {
		s.host.logf("%s: a key of %d bytes: the platform takes up to %d: Inval", name, n, cacheMaxKey)
		return "", stInval
	}
	key, ok := read(m, ptr, n)
	if !ok {
		return "", stInval
	}
	return string(key), stOK
}

// lookupOptions reads a lookup's options: whether to always use the
// requested range. Request headers are checked and, vary rules not being
// applied, not needed.
func lookupOptions(s *state, m api.Memory, mask, ptr uint64, name string) (bool, Status) {
	switch unknown := u32(mask) &^ (lookupRequestHeaders | lookupAlwaysUseRange); {
	case unknown&lookupServiceID != 0:
		s.host.logf("%s: a lookup on behalf of another service is not supported: Unsupported", name)
		return false, stUnsupported
	case unknown != 0:
		s.host.logf("%s: unknown option bits %#x: Unsupported", name, unknown)
		return false, stUnsupported
	}
	if mask&lookupRequestHeaders != 0 {
		h, ok := m.ReadUint32Le(u32(ptr))
		if !ok || s.reqs[h] == nil {
			s.host.logf("%s: the request headers' handle is not a request: Badf", name)
			return false, stBadf
		}
	}
	return mask&lookupAlwaysUseRange != 0, stOK
}

// The layout of cache_write_options on wasm32.
const (
	woMaxAge        = 0
	woRequest       = 8
	woVaryPtr       = 12
	woVaryLen       = 16
	woInitialAge    = 24
	woSWR           = 32
	woSurrogatePtr  = 40
	woSurrogateLen  = 44
	woLength        = 48
	woMetadataPtr   = 56
	woMetadataLen   = 60
	writeOptionsLen = 64
)

// writeOptions reads a write's options; request headers are allowed only
// for the non-transactional insert.
func writeOptions(s *state, m api.Memory, mask, ptr uint64, name string, insert bool) (cacheWrite, Status) {
	w := cacheWrite{length: -1}
	if unknown := u32(mask) &^ writeKnown; unknown != 0 {
		s.host.logf("%s: unknown option bits %#x: Unsupported", name, unknown)
		return w, stUnsupported
	}
	raw, ok := m.Read(u32(ptr), writeOptionsLen)
	if !ok {
		return w, stInval
	}
	u64 := func(off int) uint64 { return binary.LittleEndian.Uint64(raw[off:]) }
	u32at := func(off int) uint64 { return uint64(binary.LittleEndian.Uint32(raw[off:])) }
	duration := func(off int) time.Duration { return time.Duration(clampI64(u64(off))) }
	w.maxAge = duration(woMaxAge)
	if mask&writeRequestHeaders != 0 {
		if !insert {
			s.host.logf("%s: request headers belong to the lookup: Inval", name)
			return w, stInval
		}
		if s.reqs[uint32(u32at(woRequest))] == nil {
			s.host.logf("%s: the request headers' handle is not a request: Badf", name)
			return w, stBadf
		}
	}
	if mask&writeVaryRule != 0 {
		rule, ok := read(m, u32at(woVaryPtr), u32at(woVaryLen))
		if !ok || !utf8.Valid(rule) {
			s.host.logf("%s: the vary rule is not UTF-8: Inval", name)
			return w, stInval
		}
		s.host.logf("%s: vary rule %q accepted but not applied: the key holds one object for every request", name, rule)
	}
	if mask&writeInitialAge != 0 {
		w.initialAge = duration(woInitialAge)
	}
	if mask&writeSWR != 0 {
		w.swr = duration(woSWR)
	}
	if mask&writeSurrogateKeys != 0 {
		keys, ok := read(m, u32at(woSurrogatePtr), u32at(woSurrogateLen))
		if !ok {
			return w, stInval
		}
		if w.surrogateKeys, ok = surrogateKeys(s, keys, name); !ok {
			return w, stInval
		}
	}
	if mask&writeLength != 0 {
		w.length = clampI64(u64(woLength))
	}
	if mask&writeUserMetadata != 0 {
		if w.userMetadata, ok = read(m, u32at(woMetadataPtr), u32at(woMetadataLen)); !ok {
			return w, stInval
		}
	}
	return w, stOK
}

// surrogateKeys splits and checks a space-separated list of surrogate
// keys: up to 16 KiB in all, each up to 1 KiB of visible ASCII.
func surrogateKeys(s *state, list []byte, name string) ([]string, bool) {
	if len(list) > cacheMaxSurrogateKeys {
		s.host.logf("%s: surrogate keys of %d bytes: the platform takes up to %d: Inval", name, len(list), cacheMaxSurrogateKeys)
		return nil, false
	}
	var keys []string
	for _, k := range strings.Split(string(list), " ") {
		if k == "" {
			continue
		}
		if !validSurrogateKey(s, k, name) {
			return nil, false
		}
		keys = append(keys, k)
	}
	return keys, true
}

func validSurrogateKey(s *state, k, name string) bool {
	if len(k) > cacheMaxSurrogateKey {
		s.host.logf("%s: a surrogate key of %d bytes: the platform takes up to %d: Inval", name, len(k), cacheMaxSurrogateKey)
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] <= ' ' || k[i] > '~' {
			s.host.logf("%s: surrogate key %q has a character other than visible ASCII: Inval", name, k)
			return false
		}
	}
	return true
}

// purgeSurrogateKey is fastly_purge.purge_surrogate_key(key_ptr, key_len,
// mask, options): the POP's objects with the key dropped, or with
// soft_purge marked stale. A purge here reaches only this POP.
func purgeSurrogateKey(_ context.Context, s *state, m api.Memory, a []uint64) Status {
	const name = "fastly_purge.purge_surrogate_key"
	if unknown := u32(a[2]) &^ purgeSoft; unknown != 0 {
		s.host.logf("%s: unsupported option bits %#x: Unsupported", name, unknown)
		return stUnsupported
	}
	key, ok := read(m, a[0], a[1])
	if !ok {
		return stInval
	}
	if !validSurrogateKey(s, string(key), name) {
		return stInval
	}
	n := cacheOf(s.host).purge(string(key), a[2]&purgeSoft != 0)
	s.host.logf("%s: %q: %d objects purged", name, key, n)
	return stOK
}
