package fastlyhost

import (
	"fmt"
	"net/url"
	"strings"
)

// pathAndQuery is the path and query of a request target or absolute URI,
// as written: "http://h/a%2Fb?q" gives "/a%2Fb?q". It never decodes, because
// Viceroy keeps a URI's path-and-query as text (hyper's Uri) from the
// downstream request to the backend request, and Go's url.URL keeps only a
// decoded path plus an encoding it may redo differently.
func pathAndQuery(uri string) string {
	rest := uri
	if i := strings.Index(rest, "://"); i > 0 && !strings.ContainsAny(rest[:i], "/?#") {
		rest = rest[i+len("://"):]
		j := strings.IndexAny(rest, "/?#")
		if j < 0 {
			return "/"
		}
		rest = rest[j:]
	}
	rest, _, _ = strings.Cut(rest, "#") // a fragment never travels
	if rest == "" || rest[0] == '?' {
		rest = "/" + rest
	}
	return rest
}

// upstreamURL is the URL a guest request is sent to, built as Viceroy's
// canonical_uri (src/upstream.rs) builds it: the backend's scheme and host,
// the backend URL's path prefix ending in "/", then the guest URI's path
// and query without their leading "/", glued as text. So a backend
// "http://o/base" and a guest URI "http://h/a%2Fb?x=%2F" reach the origin
// as "/base/a%2Fb?x=%2F", unchanged.
func upstreamURL(backend *url.URL, guestURI string) (*url.URL, error) {
	pq := pathAndQuery(guestURI)
	if strings.ContainsFunc(pq, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		// Viceroy's uri_set refuses such a URI; here it would break the
		// request line.
		return nil, fmt.Errorf("URI %q has a space or control character", guestURI)
	}
	prefix := backend.EscapedPath()
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	path, query, hasQuery := strings.Cut(prefix+strings.TrimPrefix(pq, "/"), "?")
	u := &url.URL{Scheme: backend.Scheme, Host: backend.Host, RawQuery: query, ForceQuery: hasQuery && query == ""}
	if !strings.HasPrefix(path, "//") {
		// Opaque is sent as the request line's path exactly as given.
		u.Opaque = path
		return u, nil
	}
	// An Opaque starting "//" would be sent as an absolute URI, so this
	// one goes as a path whose escaped form is the text itself.
	decoded, err := url.PathUnescape(path)
	if err != nil {
		return nil, fmt.Errorf("URI %q: %w", guestURI, err)
	}
	u.Path, u.RawPath = decoded, path
	return u, nil
}
