// Command invite mints invite links into a room's priority lane: signed
// with the service's signing key set, for one room, a number of uses and
// a lifetime, sending whoever follows them to a page inside the room's
// line. It prints one link a line (-count links, each its own invite).
//
//	cd tools && WR_SIGNING_KEYS='k1:…' go run ./cmd/invite -room shop -uses 1 -ttl 48h -to /sale/ -host shop.example.com
//
// The key set is the signing_keys secret ("kid:base64key,…"; the first key
// signs), read from $WR_SIGNING_KEYS or from the file -keys-file names, so
// it never shows in the command line. Links stay valid through a key
// rotation while their key is in the set; removing it revokes them all.
// -host may be a base URL instead ("http://127.0.0.1:7676" for make
// serve). The service checks the room and path again when a link is
// followed: a room it does not know, or a path outside its line, is
// refused then.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/urlnorm"
)

// keysEnv is the variable the key set is read from without -keys-file.
const keysEnv = "WR_SIGNING_KEYS"

// maxCount bounds the links one run mints.
const maxCount = 10000

func main() {
	if err := run(os.Args[1:], os.Getenv(keysEnv), time.Now(), os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "invite:", err)
		os.Exit(2)
	}
}

// run mints the links args ask for at now, with the key set keys (unless
// -keys-file names one), printing the links to out and a summary to
// notes.
func run(args []string, keys string, now time.Time, out, notes io.Writer) error {
	fs := flag.NewFlagSet("invite", flag.ContinueOnError)
	fs.SetOutput(notes)
	room := fs.String("room", "", "the room whose priority lane the links open (required)")
	uses := fs.Int("uses", 1, fmt.Sprintf("visitors each link seats, 1 to %d", queue.MaxInviteUses))
	ttl := fs.Duration("ttl", 48*time.Hour, fmt.Sprintf("how long the links are valid, from -from, at most %v", queue.MaxInviteTTL))
	from := fs.String("from", "", "when the links become valid, RFC 3339 (\"2026-12-01T09:00:00Z\"); default now")
	to := fs.String("to", "/", "the path the links send to, in normal form, inside the room's line")
	host := fs.String("host", "", "the site's host name (links are https://<host>/_wr/invite?code=…), or a base URL (required)")
	keysFile := fs.String("keys-file", "", "a file holding the signing key set; default $"+keysEnv)
	count := fs.Int("count", 1, fmt.Sprintf("how many links to mint, each its own invite, 1 to %d", maxCount))
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	base, err := linkBase(*host)
	if err != nil {
		return err
	}
	ks, err := keySet(*keysFile, keys)
	if err != nil {
		return err
	}
	if *count < 1 || *count > maxCount {
		return fmt.Errorf("-count: %d, must be 1 to %d", *count, maxCount)
	}
	if *ttl <= 0 {
		return fmt.Errorf("-ttl: %v, must be positive", *ttl)
	}
	start := now
	if *from != "" {
		if start, err = time.Parse(time.RFC3339, *from); err != nil {
			return fmt.Errorf("-from: %v", err)
		}
	}
	inv := queue.Invite{Room: *room, Uses: *uses, To: *to, IssuedAt: now.Truncate(time.Second), Expires: start.Add(*ttl)}
	if start.After(now) {
		inv.NotBefore = start
	}
	for i := 0; i < *count; i++ {
		if inv.ID, err = queue.NewInviteID(); err != nil {
			return err
		}
		code, err := ks.MintInvite(inv)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s%s?code=%s\n", base, edge.InvitePath, code)
	}
	fmt.Fprintf(notes, "%d link(s) to room %s's priority lane, %d use(s) each, valid from %s until %s, sending to %s\n",
		*count, inv.Room, inv.Uses, start.UTC().Format(time.RFC3339), inv.Expires.UTC().Format(time.RFC3339), inv.To)
	return nil
}

// linkBase is the scheme and host links begin with: https://host, or a
// base URL as given (http or https, nothing after the host).
func linkBase(host string) (string, error) {
	if host == "" {
		return "", errors.New("-host is required: the site's host name, e.g. shop.example.com")
	}
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	u, err := url.Parse(host)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
		strings.TrimSuffix(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("-host: %q is not a host name or a base URL like https://shop.example.com", host)
	}
	if _, err := urlnorm.Host(u.Host); err != nil {
		return "", fmt.Errorf("-host: %v", err)
	}
	return u.Scheme + "://" + u.Host, nil
}

// keySet reads the signing key set from file, or else from the value of
// $WR_SIGNING_KEYS.
func keySet(file, env string) (*queue.KeySet, error) {
	src := "$" + keysEnv
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("-keys-file: %v", err)
		}
		env, src = string(b), file
	}
	if strings.TrimSpace(env) == "" {
		return nil, fmt.Errorf("no signing key set: set $%s or -keys-file to the signing_keys secret (kid:base64key,…)", keysEnv)
	}
	ks, err := queue.ParseKeySet(env)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", src, err)
	}
	return ks, nil
}
