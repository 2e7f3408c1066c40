package edge

import (
	"net"
	"strings"
	"time"

	"github.com/fastly/compute-sdk-go/fsthttp"
)

// Limits counts what clients do, so that one client cannot take many
// places in a line or guess the admin password at speed. At the edge it is
// Fastly's Edge Rate Limiting: counters and penalty boxes shared within a
// POP (not across POPs), which may undercount by up to 10%. A nil Limits
// limits nothing.
type Limits interface {
	// Count adds one event for client to the named counter and reports
	// the events counted in the last minute, this one included.
	Count(counter, client string) (int, error)
	// Penalize puts client in the named penalty box for d (whole minutes,
	// one at least: the platform's granularity).
	Penalize(box, client string, d time.Duration) error
	// Penalized reports whether client is in the named penalty box.
	Penalized(box, client string) (bool, error)
}

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
