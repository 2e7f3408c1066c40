// Package apitest tests the admin API (package api) against a real Redis
// behind the Upstash stand-in: natively through edge.Handler, and through
// the wasm under test (bin/main.wasm, or $WASM) in the local Compute host.
// Every answer is checked against the API's OpenAPI document (request and
// response schemas, content types, documented headers and statuses), and
// every route and documented answer of the document must be seen, so a
// renamed field, a route left out of the document or a document route the
// handler lacks fails the suite. At 50 rooms with full audit logs, it
// also counts the store calls of every operator request, the API's and
// the admin panel's, following their pages: none may make more than
// control.MaxStoreCalls. It has no code of its own beyond this comment.
package apitest
