// Package logs tests the structured log lines end to end: the real wasm
// ($WASM, else bin/main.wasm) in the real local stack (tools/devstack),
// whose host writes each log endpoint entry as Viceroy does ("NAME ::
// entry", tools/fastlyhost), with devconfig.json, which names the endpoint
// wr_requests. make test runs it against the Go and the TinyGo build.
//
//   - TestRequestLines: a visitor's arrival, admission and wait, a bypass,
//     the admin panel and a country's room each write one line saying where
//     the request went and why, its ticket and place, the store calls the
//     REST stand-in counted, the status answered, the POP and the country;
//     the client only as the keyed hash, and no cookie, pass,
//     Authorization value or query string however the request is crafted.
//   - TestActionLines: an action taken in the admin panel or the admin API
//     writes an action line (who by hash, what, the room's state after)
//     before the request's own; a refused one (a forged CSRF token) writes
//     none; no line holds the password, the CSRF token or the API token.
//   - TestClientAddressOptIn: with log_client_ip the address is logged as
//     it is, and its hash is not.
//   - TestReservedEndpoint: a log_endpoint Fastly reserves (stdout) writes
//     no lines, says why in the log, and the requests are answered.
package logs
