// Command cacheguest is a Compute service that makes cache calls through
// the SDK's cache/core and cache/simple packages, for the host's cache
// tests. The query names the operation and its arguments:
//
//	op=lookup    key [from to]                         core.Lookup
//	op=insert    key value [ttl swr age meta length sk] core.Insert
//	op=tx        key then (insert|cancel|update|close) [hold value ttl swr]
//	             core.NewTransaction, then that; hold first fetches
//	             /hold from the backend "origin", which the test holds
//	op=getorset  key [value ttl hold]                  simple.GetOrSet; with
//	             hold the value is fetched from /hold
//	op=bodies    key                                   a second body while the first is open
//	op=purge     key                                   simple.Purge, this POP
//	op=pop                                             FASTLY_POP
//
// The answer is "result|error".
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/fastly/compute-sdk-go/cache/core"
	"github.com/fastly/compute-sdk-go/cache/simple"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

func main() {
	fsthttp.ServeFunc(func(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
		q := r.URL.Query()
		key := []byte(q.Get("key"))
		number := func(name string) uint64 {
			n, _ := strconv.ParseUint(q.Get(name), 10, 64)
			return n
		}
		duration := func(name string) time.Duration {
			d, _ := time.ParseDuration(q.Get(name))
			return d
		}
		opts := core.WriteOptions{
			TTL: duration("ttl"), StaleWhileRevalidate: duration("swr"), InitialAge: duration("age"),
			UserMetadata: []byte(q.Get("meta")), Length: number("length"),
		}
		if sk := q.Get("sk"); sk != "" {
			opts.SurrogateKeys = strings.Split(sk, ",")
		}
		value := func() (string, error) {
			if q.Get("hold") == "" {
				return q.Get("value"), nil
			}
			return fetch(ctx, "/hold?key="+q.Get("key"))
		}
		switch q.Get("op") {
		case "lookup":
			f, err := core.Lookup(key, core.LookupOptions{From: number("from"), To: number("to")})
			fmt.Fprintf(w, "%s|%v", describe(f, err), err)
		case "insert":
			wr, err := core.Insert(key, opts)
			if err == nil {
				_, err = io.WriteString(wr, q.Get("value"))
				if cerr := wr.Close(); err == nil {
					err = cerr
				}
			}
			fmt.Fprintf(w, "inserted|%v", err)
		case "tx":
			tx, err := core.NewTransaction(key, core.LookupOptions{})
			if err != nil {
				fmt.Fprintf(w, "|%v", err)
				return
			}
			defer tx.Close()
			f, ferr := tx.Found()
			out := fmt.Sprintf("must=%v mustinsert=%v %s", tx.MustInsertOrUpdate(), tx.MustInsert(), describe(f, ferr))
			v, err := value()
			if err != nil {
				fmt.Fprintf(w, "%s|%v", out, err)
				return
			}
			switch q.Get("then") {
			case "insert":
				var wr core.WriteCloseAbandoner
				wr, f, err = tx.InsertAndStreamBack(opts)
				if err == nil {
					io.WriteString(wr, v)
					err = wr.Close()
					out += " then " + describe(f, err)
				}
			case "cancel":
				err = tx.Cancel()
			case "update":
				err = tx.Update(opts)
			}
			fmt.Fprintf(w, "%s|%v", out, err)
		case "getorset":
			rc, err := simple.GetOrSet(key, func() (simple.CacheEntry, error) {
				v, err := value()
				return simple.CacheEntry{Body: strings.NewReader(v), TTL: duration("ttl")}, err
			})
			var b []byte
			if err == nil {
				b, err = io.ReadAll(rc)
				rc.Close()
			}
			fmt.Fprintf(w, "%s|%v", b, err)
		case "bodies":
			f, err := core.Lookup(key, core.LookupOptions{})
			if err != nil {
				fmt.Fprintf(w, "|%v", err)
				return
			}
			_, err1 := f.GetRange(0, 0)
			f.Body.Close()
			second, err2 := f.GetRange(0, 0)
			var b []byte
			if err2 == nil {
				b, err2 = io.ReadAll(second)
			}
			fmt.Fprintf(w, "%v %s|%v", err1, b, err2)
		case "purge":
			fmt.Fprintf(w, "purged|%v", simple.Purge(key, simple.PurgeOptions{Scope: simple.PurgeScopePOP}))
		case "pop":
			fmt.Fprintf(w, "%s|<nil>", os.Getenv("FASTLY_POP"))
		default:
			fsthttp.Error(w, "unknown op", fsthttp.StatusBadRequest)
		}
	})
}

// describe tells what a lookup found.
func describe(f *core.Found, err error) string {
	if err != nil {
		return "notfound"
	}
	b, berr := io.ReadAll(f.Body)
	f.Body.Close()
	meta, _ := f.UserMetadata()
	return fmt.Sprintf("found body=%q/%v len=%d ttl=%s age=%s swr=%s hits=%d meta=%q stale=%v usable=%v",
		b, berr, f.Length, f.TTL, f.Age, f.StaleWhileRevalidate, f.Hits, meta, f.Stale(), f.Usable())
}

// fetch GETs path from the backend "origin".
func fetch(ctx context.Context, path string) (string, error) {
	req, err := fsthttp.NewRequest(fsthttp.MethodGet, "http://origin"+path, nil)
	if err != nil {
		return "", err
	}
	resp, err := req.Send(ctx, "origin")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
