package queue

import (
	"crypto/sha256"
	"encoding/base64"
	"net"
)

// BindMode is what a room ties its passes to, so that a pass copied to
// another client does not work there: a session cookie shared by thirty
// scripts would otherwise put thirty clients on one place.
//
// Binding is a trade-off. The User-Agent is stable for a browser but
// shared by every copy of the same browser version, so it stops only
// careless sharing; the network prefix stops sharing across networks but
// sends a phone that moves from Wi-Fi to mobile data back to the line
// (with a fresh ticket), so it suits desktop-heavy sales behind strict
// limits. None binds nothing.
type BindMode string

// The bind modes.
const (
	// BindNone accepts a pass from any client.
	BindNone BindMode = "none"
	// BindUserAgent ties a pass to the browser's User-Agent header.
	BindUserAgent BindMode = "user_agent"
	// BindIPPrefix ties a pass to the client's network: its IPv4 /24 or
	// IPv6 /48.
	BindIPPrefix BindMode = "ip_prefix"
	// BindBoth ties a pass to both.
	BindBoth BindMode = "ip_prefix+user_agent"
)

// DefaultBindMode is what a room binds when it does not say.
const DefaultBindMode = BindUserAgent

// bindLen is the bytes of SHA-256 a binding keeps: enough that a client
// cannot find another User-Agent with the same binding by trying, short
// enough for the cookie.
const bindLen = 12

// Binding is the value a pass for this client carries under mode: a short
// hash of what the mode ties it to, or "" for BindNone.
func Binding(mode BindMode, userAgent string, ip net.IP) string {
	h := sha256.New()
	switch mode {
	case BindNone:
		return ""
	case BindUserAgent:
		h.Write([]byte("ua\x00" + userAgent))
	case BindIPPrefix:
		h.Write([]byte("ip\x00" + ipPrefix(ip)))
	default: // BindBoth; ParseRoom allows nothing else
		h.Write([]byte("ip\x00" + ipPrefix(ip) + "\x00ua\x00" + userAgent))
	}
	var sum [sha256.Size]byte
	return base64.RawURLEncoding.EncodeToString(h.Sum(sum[:0])[:bindLen])
}

// ipPrefix is ip's /24 (IPv4, including IPv4-mapped IPv6) or /48 (IPv6).
func ipPrefix(ip net.IP) string {
	if v4 := ip.To4(); v4 != nil {
		return v4.Mask(net.CIDRMask(24, 32)).String() + "/24"
	}
	if len(ip) != net.IPv6len {
		return "unknown"
	}
	return ip.Mask(net.CIDRMask(48, 128)).String() + "/48"
}
