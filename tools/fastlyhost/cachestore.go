package fastlyhost

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// The POP's cache behind the fastly_cache calls (cache.go), modelled on
// Viceroy's (src/cache.rs, src/cache/store.rs):
//
//   - A key holds at most one object, and at most one obligation: the
//     promise of one transaction to insert or freshen it. A transactional
//     lookup that finds nothing usable while another transaction holds the
//     obligation waits until that one inserts, updates, cancels or closes
//     (or its instance ends), then sees the new object or takes the
//     obligation itself: request collapsing.
//   - An object's age is the time since its insertion plus its initial
//     age. It is fresh while younger than its max age (and not soft
//     purged), and usable, though stale, for stale_while_revalidate more;
//     a transaction that finds it stale and usable gets it together with
//     the obligation to freshen it, unless another transaction has that
//     already. An object past both is gone.
//   - An object's body streams: readers see the bytes as the writer writes
//     them, and an object whose writer abandons it (or whose length differs
//     from the one declared) is dropped, its readers getting an error.
//   - Memory is bounded: an object over maxEntry bytes is refused (or
//     abandoned when its body grows past it), and past maxBytes in all the
//     oldest objects are evicted first.
//
// Time is the host's Clock, so a test lets a TTL pass at once.

// The cache's bounds and the platform's limits.
const (
	// defaultCacheBytes is how much body a POP's cache holds.
	defaultCacheBytes = 256 << 20
	// defaultCacheEntryBytes is the largest object it takes.
	defaultCacheEntryBytes = 32 << 20
	// cacheMaxKey is the longest cache key (Viceroy's CacheKey::MAX_LENGTH).
	cacheMaxKey = 4096
	// cacheMaxSurrogateKey and cacheMaxSurrogateKeys bound one surrogate
	// key and the space-separated list of them.
	cacheMaxSurrogateKey, cacheMaxSurrogateKeys = 1024, 16 << 10
)

// errCacheAbandoned is what a reader of an abandoned object gets.
var errCacheAbandoned = errors.New("cache: the object's writer abandoned it")

// cacheStore is one POP's cache: each Host has its own.
type cacheStore struct {
	clock              func() time.Time
	maxBytes, maxEntry int64

	mu    sync.Mutex
	keys  map[string]*cacheKey
	order *list.List // the stored objects, oldest first
	bytes int64      // the body bytes of the stored objects
	// waiting, when set, hears the number of transactions waiting on a
	// key whenever it changes: a test holds a filler until the others wait.
	waiting func(key string, n int)
}

func newCacheStore(clock func() time.Time, maxBytes, maxEntry int64) *cacheStore {
	return &cacheStore{clock: clock, maxBytes: maxBytes, maxEntry: maxEntry, keys: map[string]*cacheKey{}, order: list.New()}
}

// cacheKey is what one key holds.
type cacheKey struct {
	present    *cacheObject
	obligation *cacheObligation
	// changed is closed (and replaced) when the obligation ends, to wake
	// the transactions waiting on it.
	changed chan struct{}
	waiters int
}

// cacheObligation is a transaction's obligation to insert or freshen key.
type cacheObligation struct {
	key  string
	stop func() bool // stops its release at the instance's end
}

// cacheWrite is the metadata a write gives an object.
type cacheWrite struct {
	maxAge, initialAge, swr time.Duration
	userMetadata            []byte
	length                  int64 // declared; -1 if none
	surrogateKeys           []string
}

// cacheObject is one stored object.
type cacheObject struct {
	key      string
	inserted time.Time
	cacheWrite
	body *cacheBody
	// Under the store's lock:
	softPurged bool
	hits       uint64
	size       int64 // body bytes counted in the store's total
	elem       *list.Element
}

func (o *cacheObject) age(now time.Time) time.Duration {
	return max(now.Sub(o.inserted), 0) + o.initialAge
}

// fresh and usable need the store's lock (softPurged).
func (o *cacheObject) fresh(now time.Time) bool { return !o.softPurged && o.age(now) < o.maxAge }
func (o *cacheObject) usable(now time.Time) bool {
	return o.age(now) < o.maxAge+o.swr
}

// knownLength is the object's length when known: its whole body's, or
// the declared one (-1: neither).
func (o *cacheObject) knownLength() int64 {
	if n, done := o.body.complete(); done {
		return n
	}
	return o.length
}

// key returns key's state, made if new; callers hold the lock.
func (c *cacheStore) key(key string) *cacheKey {
	k := c.keys[key]
	if k == nil {
		k = &cacheKey{changed: make(chan struct{})}
		c.keys[key] = k
	}
	return k
}

// current returns key's object if still usable, dropping it otherwise;
// callers hold the lock.
func (c *cacheStore) current(k *cacheKey, now time.Time) *cacheObject {
	if o := k.present; o != nil && !o.usable(now) {
		c.drop(o) // k stays, for the caller to use
	}
	return k.present
}

// hit counts a lookup that found o; callers hold the lock.
func hit(o *cacheObject) uint64 {
	o.hits++
	return o.hits
}

// lookup is a non-transactional lookup: the usable object, or nil, and
// its hit count.
func (c *cacheStore) lookup(key string) (*cacheObject, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.current(c.key(key), c.clock())
	defer c.tidy(key)
	if o == nil {
		return nil, 0
	}
	return o, hit(o)
}

// transactionLookup is a transactional lookup: the object found (fresh,
// or stale and usable), and the obligation to insert or freshen it when
// this transaction is to. It waits while another transaction holds the
// obligation and nothing usable is there, until ctx ends.
func (c *cacheStore) transactionLookup(ctx context.Context, key string) (*cacheObject, uint64, *cacheObligation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		k := c.key(key)
		now := c.clock()
		o := c.current(k, now)
		switch {
		case o != nil && (o.fresh(now) || k.obligation != nil):
			return o, hit(o), nil, nil
		case o != nil:
			return o, hit(o), c.oblige(ctx, k, key), nil
		case k.obligation == nil:
			return nil, 0, c.oblige(ctx, k, key), nil
		}
		changed := k.changed
		c.wait(key, k, 1)
		c.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
		}
		c.mu.Lock()
		c.wait(key, k, -1)
		if err := ctx.Err(); err != nil {
			return nil, 0, nil, err
		}
	}
}

func (c *cacheStore) wait(key string, k *cacheKey, delta int) {
	k.waiters += delta
	if c.waiting != nil {
		c.waiting(key, k.waiters)
	}
}

// oblige gives key's obligation to a transaction of the instance ctx
// belongs to, released when the instance ends if not before; callers hold
// the lock.
func (c *cacheStore) oblige(ctx context.Context, k *cacheKey, key string) *cacheObligation {
	ob := &cacheObligation{key: key}
	k.obligation = ob
	ob.stop = context.AfterFunc(ctx, func() { c.release(ob) })
	return ob
}

// release ends ob unfulfilled (cancel, close, the instance's end): a
// waiting transaction takes it over.
func (c *cacheStore) release(ob *cacheObligation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.settle(ob)
	c.tidy(ob.key)
}

// settle ends ob and wakes the transactions waiting on it; callers hold
// the lock.
func (c *cacheStore) settle(ob *cacheObligation) {
	ob.stop()
	if k := c.keys[ob.key]; k != nil && k.obligation == ob {
		k.obligation = nil
		close(k.changed)
		k.changed = make(chan struct{})
	}
}

// tidy forgets key when it holds nothing; callers hold the lock.
func (c *cacheStore) tidy(key string) {
	if k := c.keys[key]; k != nil && k.present == nil && k.obligation == nil && k.waiters == 0 {
		delete(c.keys, key)
	}
}

// insert stores a new object under key, whose body the caller then
// writes, fulfilling ob if given (a transaction's insert). Last writer
// wins.
func (c *cacheStore) insert(key string, w cacheWrite, ob *cacheObligation) (*cacheObject, error) {
	if w.length > c.maxEntry {
		return nil, fmt.Errorf("an object of %d bytes: the cache takes up to %d", w.length, c.maxEntry)
	}
	o := &cacheObject{key: key, cacheWrite: w}
	o.body = &cacheBody{store: c, owner: o, grown: make(chan struct{}), declared: w.length}
	c.mu.Lock()
	defer c.mu.Unlock()
	o.inserted = c.clock()
	c.put(o, ob)
	return o, nil
}

// update freshens ob's stale object with new metadata and the same body.
func (c *cacheStore) update(ob *cacheObligation, old *cacheObject, w cacheWrite) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.length < 0 {
		w.length = old.length
	}
	o := &cacheObject{key: old.key, cacheWrite: w, body: old.body, inserted: c.clock()}
	c.put(o, ob)
}

// put makes o its key's object, settling ob; callers hold the lock.
func (c *cacheStore) put(o *cacheObject, ob *cacheObligation) {
	k := c.key(o.key)
	if old := k.present; old != nil {
		c.drop(old)
	}
	k.present = o
	o.elem = c.order.PushBack(o)
	o.body.mu.Lock()
	o.size = int64(len(o.body.data))
	o.body.owner = o
	o.body.mu.Unlock()
	c.bytes += o.size
	if ob != nil {
		c.settle(ob)
	}
	c.evict()
}

// drop removes o from the store; callers hold the lock.
func (c *cacheStore) drop(o *cacheObject) {
	if o.elem == nil {
		return
	}
	c.order.Remove(o.elem)
	o.elem = nil
	c.bytes -= o.size
	o.size = 0
	o.body.mu.Lock()
	if o.body.owner == o {
		o.body.owner = nil
	}
	o.body.mu.Unlock()
	if k := c.keys[o.key]; k != nil && k.present == o {
		k.present = nil
	}
}

// evict drops the oldest objects until the store is within its bound;
// callers hold the lock.
func (c *cacheStore) evict() {
	for c.bytes > c.maxBytes && c.order.Len() > 0 {
		o := c.order.Front().Value.(*cacheObject)
		c.drop(o)
		c.tidy(o.key)
	}
}

// grew counts n more body bytes of o's; callers hold no lock.
func (c *cacheStore) grew(o *cacheObject, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o.elem == nil {
		return
	}
	o.size += n
	c.bytes += n
	c.evict()
}

// failed drops o, whose body failed.
func (c *cacheStore) failed(o *cacheObject) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drop(o)
	c.tidy(o.key)
}

// purge drops (or, soft, marks stale) every object with the surrogate
// key; it returns how many.
func (c *cacheStore) purge(surrogate string, soft bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for e := c.order.Front(); e != nil; {
		o := e.Value.(*cacheObject)
		e = e.Next()
		for _, sk := range o.surrogateKeys {
			if sk != surrogate {
				continue
			}
			n++
			if soft {
				o.softPurged = true
			} else {
				c.drop(o)
				c.tidy(o.key)
			}
			break
		}
	}
	return n
}

// cacheBody is an object's body: written once, read by many as it grows.
type cacheBody struct {
	store    *cacheStore
	declared int64 // the declared length, or -1

	mu    sync.Mutex
	owner *cacheObject // the stored object counting its bytes, if any
	data  []byte
	done  bool
	err   error
	// grown is closed (and replaced) at every change, to wake readers.
	grown chan struct{}
}

// complete returns the body's length once it is whole.
func (b *cacheBody) complete() (int64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return int64(len(b.data)), b.done && b.err == nil
}

// changed wakes the readers; callers hold b.mu.
func (b *cacheBody) changed() {
	close(b.grown)
	b.grown = make(chan struct{})
}

// Write appends p, failing the body when it outgrows the cache's bound.
func (b *cacheBody) Write(p []byte) (int, error) {
	b.mu.Lock()
	if b.done || b.err != nil {
		b.mu.Unlock()
		return 0, errors.New("cache: write to a finished object")
	}
	if int64(len(b.data)+len(p)) > b.store.maxEntry {
		b.mu.Unlock()
		err := fmt.Errorf("cache: the object outgrew the %d bytes the cache takes", b.store.maxEntry)
		b.fail(err)
		return 0, err
	}
	b.data = append(b.data, p...)
	owner := b.owner
	b.changed()
	b.mu.Unlock()
	if owner != nil {
		b.store.grew(owner, int64(len(p)))
	}
	return len(p), nil
}

// finish ends the body: whole, or failed when its length is not the
// declared one.
func (b *cacheBody) finish() error {
	b.mu.Lock()
	if b.done || b.err != nil {
		b.mu.Unlock()
		return nil
	}
	if b.declared >= 0 && int64(len(b.data)) != b.declared {
		n := len(b.data)
		b.mu.Unlock()
		err := fmt.Errorf("cache: the object has %d bytes, not the %d declared", n, b.declared)
		b.fail(err)
		return err
	}
	b.done = true
	b.changed()
	b.mu.Unlock()
	return nil
}

// fail ends the body with err, and drops its object.
func (b *cacheBody) fail(err error) {
	b.mu.Lock()
	if b.done || b.err != nil {
		b.mu.Unlock()
		return
	}
	b.err = err
	owner := b.owner
	b.changed()
	b.mu.Unlock()
	if owner != nil {
		b.store.failed(owner)
	}
}

// waitFor blocks until the body has n bytes, or ends, or ctx does; it
// returns the body's length then and whether it is whole.
func (b *cacheBody) waitFor(ctx context.Context, n int64) (int64, bool, error) {
	for {
		b.mu.Lock()
		have, done, err, grown := int64(len(b.data)), b.done, b.err, b.grown
		b.mu.Unlock()
		switch {
		case err != nil:
			return have, false, err
		case have >= n || done:
			return have, done, nil
		}
		select {
		case <-grown:
		case <-ctx.Done():
			return have, false, ctx.Err()
		}
	}
}

// cacheReader reads bytes [pos, end) of a body (end < 0: to its end),
// waiting for them as the writer writes them, until ctx (the reading
// instance's) ends.
type cacheReader struct {
	ctx      context.Context
	b        *cacheBody
	pos, end int64
}

func (r *cacheReader) Read(p []byte) (int, error) {
	if r.end >= 0 && r.pos >= r.end {
		return 0, io.EOF
	}
	have, _, err := r.b.waitFor(r.ctx, r.pos+1)
	if r.pos >= have {
		if err == nil {
			err = io.EOF
		}
		return 0, err
	}
	upto := have
	if r.end >= 0 {
		upto = min(upto, r.end)
	}
	r.b.mu.Lock()
	n := copy(p, r.b.data[r.pos:upto])
	r.b.mu.Unlock()
	r.pos += int64(n)
	return n, nil
}
