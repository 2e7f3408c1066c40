// Package contract tests the JSON client contract, the answers a
// visitor's client (the queue page's script, a single-page site, an app)
// gets from a protected path, against its document, docs/visitor.schema.json:
// natively through edge.Handler and through the wasm under test
// (bin/main.wasm, or $WASM) in the local Compute host, both with a real
// Redis behind the Upstash stand-in and the demo origin. Every state the
// document lists must be met and match its schema, its status codes
// (x-status) and Retry-After (x-retry-after); the pass travels in the
// Waiting-Room-Pass header as well as in cookies, and CORS preflights are
// answered without a store call. It has no code of its own beyond this
// comment.
package contract
