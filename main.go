// Command waitingroom is an edge waiting room for Fastly Compute. It holds
// the visitors an origin cannot take in a fair, numbered line served from
// the edge, and lets them through in order at the rate the origin can
// handle. Package platform is the only one that calls the platform's host
// functions (stores, backends, rate limits, cache); this file starts it.
//
// # TinyGo rules for every package of this module
//
// Users build this module with TinyGo (0.33 and later) as well as Go, and
// TinyGo differs in ways no Go build shows, so the whole edge module keeps
// to these (docs/design.md, "The TinyGo rules", has the rest):
//
//   - A package-level variable holds a constant, a literal, or a sentinel
//     from errors.New with a literal message; nothing computed by calling
//     functions. TinyGo evaluates package initializers at compile time,
//     and 0.33 evaluated hex.EncodeToString(sha1.Sum(...)) to 40 NUL
//     bytes. Compute such values inside a function, at first use, and test
//     the value under `tinygo test` (store.TestScriptSHA).
//     tools/edgerules enforces this.
//   - No panic on any input: recover does not work on wasm.
//   - No net/http, text/template or html/template; no API newer than the
//     Go 1.23 standard library.
package main

import "github.com/edgequeue/waitingroom/platform"

func main() { platform.Serve() }
