// Package match decides which room a request is in and which requests
// never wait. It is pure Go: what only the platform knows (the client's
// country, a bot verdict, an ACL, a secret) it asks through Facts, lazily.
//
// # The model
//
// A room applies where its Target says: hosts, paths and, optionally,
// countries. A request is judged on each reading of its normalised path
// (urlnorm.Path's Literal and Loose), and under each reading it is in the
// most specific room whose target holds it:
//
//  1. host: an exact name beats a wildcard, a wildcard with a longer suffix
//     beats a shorter one ("*.shop.example.com" over "*.example.com"), and
//     a wildcard beats a room without hosts;
//  2. path: the pattern with more literal characters (those other than
//     "*") wins;
//  3. a room with countries or except_countries beats one without;
//  4. the room listed first in the config's rooms index.
//
// A request in no room goes to the origin.
//
// Hosts are names, compared in urlnorm.Host's form (lower case, no port,
// no trailing dot), and wildcards: "*.example.com" holds every name below
// example.com at any depth ("a.example.com", "a.b.example.com"), never
// example.com itself nor "evilexample.com". List both to hold both.
//
// Paths are patterns on the decoded normal form of the path:
//   - "/tickets/" (no "*") is a prefix: it holds "/tickets/" and all
//     below, as a plain string prefix ("/tick" holds "/tickets").
//   - "/tickets/*/buy" is a prefix too, where each "*" stands for any run of
//     characters within one segment, never a "/": it holds "/tickets/42/buy"
//     and "/tickets/42/buy/now", not "/tickets/4/2/buy". "**" is refused.
//   - "*.json" (no leading "/") is a glob for the path's last segment,
//     matched whole: it holds "/api/x.json", not "/api/x.jsonp" nor
//     "/x.json/y".
//
// A pattern that no normalised path can match ("/a/../b", "/%73tatic/")
// is refused, naming the form to write. With case_insensitive_paths,
// patterns and paths are compared under Unicode simple case folding.
//
// Countries are ISO 3166-1 alpha-2 codes. When the client's country is
// unknown (no address, no geolocation data, a lookup error, a code such as
// "**"), a countries room does not apply and an except_countries room
// does. The country is asked only when a room's host and path already
// match and the room names countries.
//
// A Bypass is a set of rules for requests that never wait: by client IP or
// CIDR range, by Fastly ACL, by path pattern, by extension of the last
// segment, by method, by header value (plain or a secret store entry), by
// cookie, or for verified bots. The global rules (the config key "bypass")
// are tried first, then the room's. Path and extension rules depend on the
// reading; the others do not. A request is protected when any reading is
// in a room and bypassed under that reading by neither rule set, so no
// reading can walk around the line.
//
// Every list holds at most MaxEntries entries of at most MaxEntryLength
// bytes, so a configuration cannot make each request slow, and matching is
// linear in the path's length: a glob has only "*", matched greedily.
package match
