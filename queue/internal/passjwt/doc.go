// Package passjwt writes and checks the JWTs a waiting room's passes
// travel in (HS256, a "kid" header, the claims of [Claims]) by hand, so
// that signing and refusing a pass allocate next to nothing. Package queue
// holds what a pass means; this package only holds its bytes.
//
// Why by hand. Users build the edge with TinyGo, whose conservative
// garbage collector makes every allocated byte expensive: in the hot-path
// benchmarks under wazero a collection runs each time some 100 KB have
// been allocated and scans the live heap word by word (the goroutine's
// 64 KB stack included), 15 to 35 ns per allocated byte, where Go's
// collector costs well under one. github.com/golang-jwt/jwt/v5's
// reflective encoding/json (the claims struct, NumericDate, ClaimStrings,
// its header map) and hmac.New allocated most of those bytes, and were
// slow in themselves under TinyGo's size-optimised code. So:
//
//   - [Key.Sign] writes the token into stack buffers, with HMAC-SHA256
//     from sha256.Sum256 and each key's header segment computed once, in
//     [NewKey]. Its one allocation is the token.
//   - [SignedBy] checks, without allocating, that a token's header is one
//     of the keys' and that its signature matches: a forged or tampered
//     cookie costs microseconds and never reaches a JSON decoder.
//   - [Key.Parse] then has jwt parse and validate the token in full (the
//     fast check only ever refuses more, never accepts on its own), with
//     a claims type that decodes itself, reading the shapes Sign writes
//     by hand and handing anything else to encoding/json, one field at a
//     time.
//
// What remains of a valid pass's cost is jwt's own parsing (its header
// map, hmac.New, copies of the segments): about 1.7 KB of the 2.1 KB that
// verifying a pass allocates under TinyGo.
//
// Equivalence. Hand-written codecs are only safe if they say exactly what
// the libraries they replace would have said, and the tests prove it
// rather than trust it: every token Sign writes is byte for byte the one
// jwt.NewWithClaims(jwt.SigningMethodHS256, …).SignedString wrote
// (TestSignMatchesJWT over odd keys, key ids and claims, and
// FuzzSignMatchesJWT over any), the HMAC is
// crypto/hmac's (TestMACMatchesCryptoHMAC), each header is encoding/json's
// of jwt's header map (TestHeaderIsJWTs), and the claims decoder agrees
// with encoding/json on every input, valid or not
// (FuzzClaimsMatchEncodingJSON and TestClaimsMatchEncodingJSON, which
// runs its seeds under TinyGo too: TinyGo never runs Fuzz targets).
package passjwt
