// The line's machinery for a request: the gate over the store, built from
// the secrets and the settings, or the setup problem that keeps it away.

package edge

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/settings"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/store/shard"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// The examples the backend fixes show in place of the real host name.
const (
	originExample  = "<your site's host name>"
	upstashExample = "<your database>.upstash.io"
)

// unresolvable reports whether a store error came from a DNS failure of the
// upstash backend.
func unresolvable(err error) bool { return errors.Is(err, ErrBackendUnresolvable) }

// describe says what a setup error asks for, or passes another error on.
func describe(err error) string {
	var setup *SetupError
	if errors.As(err, &setup) {
		return "setup: " + setup.Error()
	}
	return err.Error()
}

// gate builds the line's machinery from the secrets and the request's settings.
func (q *request) gate() (*queue.Gate, error) {
	keys, err := q.keys()
	if err != nil {
		return nil, err
	}
	st, err := q.store()
	if err != nil {
		return nil, err
	}
	g := &queue.Gate{Store: st, Keys: keys, Logf: q.Logf}
	if q.Cache != nil {
		g.Snapshots = snapshots{q.Cache, time.Now}
		g.Solutions = solutions{q.Cache}
	}
	if q.Limits != nil {
		g.Joins = joinCounter{q.Limits, q.Geo}
	}
	return g, nil
}

// lineGate is gate for a request the line must answer: what the operator
// has to set gets the setup page, any other failure a 503 page logged
// under who; ok is false when it has answered.
func (q *request) lineGate(w fsthttp.ResponseWriter, who string) (gate *queue.Gate, ok bool) {
	gate, err := q.gate()
	if err == nil {
		return gate, true
	}
	var setup *SetupError
	if errors.As(err, &setup) {
		q.notSetUp(w, setup)
		return nil, false
	}
	q.Logf("%s: cannot run the line: %v", who, err)
	q.problem(w, fsthttp.StatusServiceUnavailable, "Temporarily unavailable",
		"This site's waiting room is not configured yet. Please try again in a minute.")
	return nil, false
}

// secret reads a secret the line cannot run without. What the operator has
// to fix comes back as a *SetupError; a failure to read, as a plain error.
func (q *request) secret(name string) ([]byte, error) {
	v, err := q.secrets.Get(name)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, secretProblem(name, "is missing")
	case errors.Is(err, ErrStoreNotLinked):
		return nil, storeNotLinked(SecretStore, "fastly secret-store list")
	case err != nil:
		return nil, fmt.Errorf("secret %s: %w", name, err)
	case len(bytes.TrimSpace(v)) == 0:
		return nil, secretProblem(name, "is blank")
	case !q.Local && IsDevSecret(name, v):
		return nil, secretProblem(name, "holds the public development value from fastly.toml's [local_server]")
	}
	return v, nil
}

// keys reads and parses the signing keys. A request whose line is logged
// keeps them in its log, so the line's client hash does not read and
// parse them a second time.
func (q *request) keys() (*queue.KeySet, error) {
	if q.log != nil && q.log.keys != nil {
		return q.log.keys, nil
	}
	raw, err := q.secret(SecretSigningKeys)
	if err != nil {
		return nil, err
	}
	keys, err := q.parseKeys(string(raw))
	if err != nil {
		return nil, secretProblem(SecretSigningKeys, "is not a key set ("+err.Error()+")")
	}
	if q.log != nil {
		q.log.keys = keys
	}
	return keys, nil
}

// store is the rooms' store: each room's shards (package store/shard)
// over the database, calls counted into the request's log line when it
// has one.
func (q *request) store() (*shard.Store, error) {
	db, err := q.database()
	if err != nil {
		return nil, err
	}
	backends := []shard.Backend{q.withDownMarker(db)}
	for j := 1; j < q.settings.UpstashDatabases; j++ {
		more, err := q.databaseOf(j, db)
		if err != nil {
			return nil, err
		}
		backends = append(backends, q.withDownMarker(more))
	}
	return &shard.Store{Backends: backends, Shards: q.shardsOf}, nil
}

// withDownMarker is db with the POP's down marker (downMarked), when the
// POP has a cache to keep it in.
func (q *request) withDownMarker(db *store.Upstash) shard.Backend {
	if q.Cache == nil {
		return db
	}
	return downMarked{db, q.Cache, q.Logf}
}

// SecretUpstashTokenOf is the secret holding the REST token of Upstash
// database j (1 and up).
func SecretUpstashTokenOf(j int) string { return SecretUpstashToken + "_" + strconv.Itoa(j) }

// UpstashBackendOf is the Fastly backend of Upstash database j (1 and up).
func UpstashBackendOf(j int) string { return "upstash_" + strconv.Itoa(j) }

// databaseOf is Upstash database j (1 and up) of those upstash_databases
// counts, reached through its backend (which says where it is), like
// first in all else: its lines' random order is keyed as first's, so
// that where a shard lives changes nothing of its order.
func (q *request) databaseOf(j int, first *store.Upstash) (*store.Upstash, error) {
	if q.UpstashDatabase == nil {
		return nil, &SetupError{Setting: "config " + settings.KeyUpstashDatabases,
			Problem: fmt.Sprintf("is %d, but this host has no backend for databases beyond the first", q.settings.UpstashDatabases),
			Fix:     "fastly config-store-entry delete --store-id=" + configStoreID + " --key=" + settings.KeyUpstashDatabases}
	}
	token, err := q.secret(SecretUpstashTokenOf(j))
	if err != nil {
		return nil, err
	}
	transport := q.UpstashDatabase(j)
	if q.log != nil && transport != nil {
		transport = countedTransport{transport, &q.log.line}
	}
	return &store.Upstash{URL: UpstashBackendURL, Token: strings.TrimSpace(string(token)),
		Transport: transport, Timeout: first.Timeout, RandomKey: first.RandomKey}, nil
}

// shardsOf is how many shards the configured room runs as (1 for a room
// not configured).
func (q *request) shardsOf(room string) int {
	for _, r := range q.settings.Rooms {
		if r.Name == room {
			return max(r.Shards, 1)
		}
	}
	return 1
}

// database is the Upstash database of the config, calls counted into the
// request's log line when it has one.
func (q *request) database() (*store.Upstash, error) {
	url := q.settings.UpstashURL
	switch {
	case q.settings.UpstashUnset != nil:
		return nil, q.settings.UpstashUnset
	case url == "" && q.UpstashViaBackend:
		url = UpstashBackendURL
	case url == "":
		// Without a Fastly backend, nothing else says where the database is.
		return nil, upstashURLProblem("is missing")
	}
	token, err := q.secret(SecretUpstashToken)
	if err != nil {
		return nil, err
	}
	transport := q.Upstash
	if q.log != nil && transport != nil {
		transport = countedTransport{transport, &q.log.line}
	}
	return &store.Upstash{URL: url, Token: strings.TrimSpace(string(token)),
		Transport: transport, Timeout: q.settings.StoreTimeout, RandomKey: randomKey(token)}, nil
}

// randomKey seeds a new line's random calling order with a value visitors
// cannot know, derived from the store token.
func randomKey(token []byte) string {
	m := hmac.New(sha256.New, token)
	m.Write([]byte("waiting-room random order"))
	return hex.EncodeToString(m.Sum(nil))
}
