// Package rules tests the rules that place a request in a room or let it
// past every line (package match, through match.Judge and the edge), end
// to end: the real wasm ($WASM, else bin/main.wasm) in the real local
// stack (tools/devstack) with the repository's fastly.toml, whose
// [local_server.geolocation] places some loopback addresses in countries
// and whose [local_server.acls] holds the ACL "office". Clients are
// loopback addresses (127.x.y.z), which the local host reports as the
// client's IP; bot detection is read from Viceroy's X-Fastly-Bot-* test
// headers. make test runs it against the Go and the TinyGo build.
//
//   - TestCountryRooms: countries and except_countries rooms, and a
//     client whose country is unknown (no record, or "**").
//   - TestBypassRules: every bypass rule (an address, a CIDR range, an
//     IPv4-mapped range, an ACL's ALLOW entry, an extension, a method, a
//     header's value, a header's secret value, a cookie, a cookie's
//     value, a verified bot, and the global rules) reaches the origin
//     with Waiting-Room-Bypass naming it, a forged one removed, and no
//     store call though it carries a pass that would join the line; each
//     near miss (another address, ACL BLOCK, another method or value, an
//     unverified or unanalysed bot, a missing secret) joins the line.
//   - TestSpecificity: exact host, wildcard, any host, the longest literal
//     path and a glob decide the room, not the rooms' order; a request in
//     no room reaches the origin without a Waiting-Room-Bypass.
//   - TestBrokenRulesLetNobodyThrough: an invalid global bypass and an ACL
//     the service lacks are logged and let nobody through.
//   - TestTheDemoConfig: make serve's devconfig.json shows a German sale
//     with its own line and page, the office ACL and the global rules.
package rules
