// The client a request comes from: its address, and the names it goes by
// in Limits' counters, audit entries and log lines.
//
// They are pure functions of the address, called by every stage that
// counts, logs or judges a client, so they sit beside the path.

package edge

import (
	"net"
	"net/netip"
	"strings"

	"github.com/edgequeue/waitingroom/accesslog"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// ClientKey names the client a request comes from for Limits: its IPv4
// address, or the /64 network of an IPv6 one (one household or phone gets
// a whole /64, so its addresses are one client). It is "" for a request
// without a usable address, which is then not limited.
func ClientKey(ip net.IP) string {
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	if len(ip) != net.IPv6len {
		return ""
	}
	prefix := ip.Mask(net.CIDRMask(64, 128))
	return strings.TrimSuffix(prefix.String(), "::") + "::/64"
}

// NetworkKey names the network of addr for the limits per network: its
// IPv4 /24 or IPv6 /48 ("203.0.113.0/24", "2001:db8:1::/48"; an
// IPv4-mapped address is its IPv4 one's), or "" for the zero Addr.
func NetworkKey(addr netip.Addr) string {
	if !addr.IsValid() {
		return ""
	}
	addr = addr.Unmap()
	bits := 48
	if addr.Is4() {
		bits = 24
	}
	p, err := addr.Prefix(bits)
	if err != nil {
		return ""
	}
	return p.String()
}

// clientIP is the address r comes from. The SDK gives the address alone;
// one with a port (a native test's) is read too.
func clientIP(r *fsthttp.Request) net.IP {
	addr := r.RemoteAddr
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	return net.ParseIP(addr)
}

// clientKey names the client of r for Limits, or "" when r has no usable
// address.
func clientKey(r *fsthttp.Request) string { return ClientKey(clientIP(r)) }

// clientAddr is ip as a netip.Addr (an IPv4-mapped one unmapped), or the
// zero Addr when ip is not an address.
func clientAddr(ip net.IP) netip.Addr {
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return netip.Addr{}
	}
	return a.Unmap()
}

// ClientHash names the client of r in audit entries and log lines
// without keeping its address: an HMAC of the address under the service's
// signing key, so the same client has the same name across requests and
// nobody without the key can tell which address it was. 16 hex digits
// tell apart the operators and clients a log will ever hold.
func ClientHash(keys *queue.KeySet, r *fsthttp.Request) string {
	return accesslog.ClientHash(keys.Key(), clientAddr(clientIP(r)).String())
}
