package platform

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/fastly/compute-sdk-go/acl"
	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/geo"
)

// geolocation is Fastly's geolocation of client addresses.
type geolocation struct{}

func (geolocation) Country(ip netip.Addr) (string, error) {
	// An address the platform has no record of reads as an empty record
	// (the SDK turns the host's None into one), so its country is "".
	g, err := geo.Lookup(net.IP(ip.AsSlice()))
	if err != nil {
		return "", err
	}
	return g.CountryCode, nil
}

// acls looks addresses up in the service's Fastly ACLs.
type acls struct{}

func (acls) Lookup(name string, ip netip.Addr) (string, error) {
	h, err := acl.Open(name)
	if errors.Is(err, acl.ErrNotFound) {
		return "", fmt.Errorf("acl %s: %w", name, edge.ErrNotFound)
	}
	if err != nil {
		return "", err
	}
	e, err := h.Lookup(net.IP(ip.AsSlice()))
	if errors.Is(err, acl.ErrNoContent) { // no entry matches ip
		return "", nil
	}
	return e.Action, err
}

// bots is Fastly's bot detection of the visitors' requests.
type bots struct{}

func (bots) Verified(r *fsthttp.Request) (bool, error) {
	// The SDK fills what it can and returns the first error among the
	// details (a bot's name the platform did not give...): the verdict
	// stands when all three flags were read and set.
	d, err := r.BotDetection()
	if d != nil && d.Analyzed && d.Detected && d.Verified {
		return true, nil
	}
	return false, err
}
