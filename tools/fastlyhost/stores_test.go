package fastlyhost

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"log"
	"strings"
	"sync"
	"testing"
	"time"
)

// storeGuest builds testdata/storeguest and serves it from one Host, whose
// runs are separate instances sharing the host's stores.
func storeGuest(t *testing.T) *Host {
	t.Helper()
	wasm := mustBuildGuest(t, "storeguest")
	m := &Manifest{
		ConfigStores: map[string]map[string]string{"cfg": {"greeting": "hello"}},
		KVStores:     map[string]map[string]KVEntry{"kv": {"seeded": {Data: []byte("world"), Metadata: "m"}}},
	}
	h, err := New(context.Background(), wasm, m, Options{Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

// runStore runs one instance of the store guest and returns its lines.
func runStore(t *testing.T, h *Host, ops ...string) []string {
	t.Helper()
	var stdout bytes.Buffer
	code, err := h.Run(context.Background(), "storeguest", ops, &stdout, io.Discard)
	if code != 0 || err != nil {
		t.Fatalf("run %q: exit %d, %v\n%s", ops, code, err, stdout.String())
	}
	return strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
}

// TestStoresThroughTheSDK checks the store calls as the SDK sees them,
// with Viceroy's answers: KV writes persist across instances, a generation
// to match only matters for an existing key, deleting a missing key
// succeeds, an invalid key is Inval, a bad list cursor a bad request, an
// item's time to live ends it, and dictionaries are the config stores.
func TestStoresThroughTheSDK(t *testing.T) {
	h := storeGuest(t)
	steps := []struct {
		name string
		ops  []string
		want []string
	}{
		{"seeded item, missing key, invalid key, writes", []string{
			"lookup", "seeded", "lookup", "missing", "lookup", "a#b", "insert", "a;b", "x",
			"insert", "animal", "cat", "delete", "never-there",
		}, []string{"world|m|<nil>", "||kvstore: key not found", "||kvstore: invalid key", "kvstore: invalid key", "<nil>", "<nil>"}},
		{"a write outlives its instance; generations", []string{
			"lookup", "animal", "insert", "animal", "dog", "ifgen=last", "insert", "animal", "monkey", "ifgen=last",
			"insert", "fresh", "v", "ifgen=1337", "lookup", "animal",
		}, []string{"cat||<nil>", "<nil>", "kvstore: precondition failed", "<nil>", "dog||<nil>"}},
		{"modes and metadata", []string{
			"insert", "animal", "x", "mode=add", "insert", "animal", "<", "mode=prepend", "insert", "animal", ">", "mode=append", "meta=mm",
			"lookup", "animal", "insert", "added", "a", "mode=add", "lookup", "added",
		}, []string{"kvstore: precondition failed", "<nil>", "<nil>", "<dog>|mm|<nil>", "<nil>", "a||<nil>"}},
		{"time to live", []string{"insert", "brief", "b", "ttl=1", "lookup", "brief", "sleep", "1100", "lookup", "brief"},
			[]string{"<nil>", "b||<nil>", "||kvstore: key not found"}},
		{"list pages and cursors", []string{
			"insert", "p1", "1", "insert", "p2", "2", "insert", "p3", "3", "insert", "q", "4",
			"list", "p", "2", "", "list", "p", "2", base64.StdEncoding.EncodeToString([]byte("p1")), "list", "p", "2", "!!",
		}, []string{"<nil>", "<nil>", "<nil>", "<nil>", "p1,p2;p3;<nil>", "p2,p3;<nil>", "kvstore: bad request"}},
		{"dictionaries and config stores", []string{
			"dict", "cfg", "greeting", "dict", "cfg", "nope", "dict", "nope", "x", "config", "", "x", "frombytes", "shh",
		}, []string{"hello|<nil>", "|key not found", "|dictionary not found", "|config store not found", "shh|<nil>"}},
	}
	for _, st := range steps {
		got := runStore(t, h, st.ops...)
		if strings.Join(got, "\n") != strings.Join(st.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", st.name, got, st.want)
		}
	}
}

// TestKVWritesFromConcurrentInstances appends from many instances at once:
// every append lands, as the store serialises writes.
func TestKVWritesFromConcurrentInstances(t *testing.T) {
	h := storeGuest(t)
	const n = 16
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var stdout bytes.Buffer
			if code, err := h.Run(context.Background(), "storeguest", []string{"insert", "count", "x", "mode=append"}, &stdout, io.Discard); code != 0 || err != nil || stdout.String() != "<nil>\n" {
				t.Errorf("append: exit %d, %v, %q", code, err, stdout.String())
			}
		}()
	}
	wg.Wait()
	if got := runStore(t, h, "lookup", "count")[0]; got != strings.Repeat("x", n)+"||<nil>" {
		t.Errorf("after %d appends: %q", n, got)
	}
}

// TestKVListBody checks a list call's body against Viceroy's own tests of
// it (test_kv_store_item_list_advanced in src/object_store.rs): keys in
// byte order, meta with the limit, the prefix when given and a base64
// next_cursor while keys remain; a limit of 0 over keys is refused, where
// Viceroy panics.
func TestKVListBody(t *testing.T) {
	kv := &kvStores{now: time.Now, stores: map[string]map[string]*kvValue{"s": {}}}
	for _, k := range []string{"key3", "insert_key", "key1", "key2", "a<&>"} {
		kv.insert("s", k, []byte("v"), kvInsert{})
	}
	str := func(s string) *string { return &s }
	cursor := func(k string) *string { return str(base64.StdEncoding.EncodeToString([]byte(k))) }
	tests := []struct {
		cursor, prefix *string
		limit          uint32
		want           string
	}{
		{nil, nil, 1000, `{"data":["a<&>","insert_key","key1","key2","key3"],"meta":{"limit":1000}}`},
		{nil, str("key"), 1000, `{"data":["key1","key2","key3"],"meta":{"limit":1000,"prefix":"key"}}`},
		{nil, str("key"), 1, `{"data":["key1"],"meta":{"limit":1,"prefix":"key","next_cursor":"a2V5MQ=="}}`},
		{cursor("key1"), str("key"), 1, `{"data":["key2"],"meta":{"limit":1,"prefix":"key","next_cursor":"a2V5Mg=="}}`},
		{cursor("key2"), str("key"), 1, `{"data":["key3"],"meta":{"limit":1,"prefix":"key"}}`},
		{nil, str("zzz"), 0, `{"data":[],"meta":{"limit":0,"prefix":"zzz"}}`},
	}
	for _, tc := range tests {
		body, kvErr, ok := kv.list("s", tc.cursor, tc.prefix, tc.limit)
		if string(body) != tc.want || kvErr != kvOK || !ok {
			t.Errorf("list(%v, %v, %d) = %s, %d, %v; want %s", tc.cursor, tc.prefix, tc.limit, body, kvErr, ok, tc.want)
		}
	}
	for _, bad := range []string{"!!", "a2V5MQ", "a2V5\nMQ==", base64.StdEncoding.EncodeToString([]byte{0xff})} {
		if _, kvErr, _ := kv.list("s", &bad, nil, 10); kvErr != kvBadRequest {
			t.Errorf("cursor %q: KV error %d, want bad request", bad, kvErr)
		}
	}
	if _, _, ok := kv.list("s", nil, nil, 0); ok {
		t.Error("a limit of 0 over keys was served")
	}
}

// TestKVTimeToLive checks that an item whose time to live is over is gone
// for lookups, lists and generation checks, and that a time to live of 0
// ends the item at once, as in Viceroy.
func TestKVTimeToLive(t *testing.T) {
	kv := &kvStores{now: time.Now, stores: map[string]map[string]*kvValue{"s": {}}}
	kv.insert("s", "now", []byte("v"), kvInsert{hasTTL: true})
	kv.insert("s", "later", []byte("v"), kvInsert{hasTTL: true, ttl: time.Hour})
	if kv.lookup("s", "now") != nil || kv.lookup("s", "later") == nil {
		t.Error("a time to live of 0 kept the item, or one of an hour did not")
	}
	kv.insert("s", "gone", []byte("v"), kvInsert{hasTTL: true})
	if got := kv.insert("s", "gone", []byte("v"), kvInsert{mode: kvAdd, hasIfGeneration: true, ifGeneration: 1}); got != kvOK {
		t.Errorf("add over an expired item: KV error %d", got)
	}
	body, _, _ := kv.list("s", nil, nil, 10)
	if want := `{"data":["gone","later"],"meta":{"limit":10}}`; string(body) != want {
		t.Errorf("list = %s, want %s", body, want)
	}
	a, b := kv.nextGeneration(), kv.nextGeneration()
	if b <= a {
		t.Errorf("generations %d then %d", a, b)
	}
}
