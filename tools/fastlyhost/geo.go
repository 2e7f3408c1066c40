package fastlyhost

import (
	"context"
	"net/netip"

	"github.com/tetratelabs/wazero/api"
)

// defaultLoopbackGeo is the record Viceroy gives a loopback address the
// mapping lacks, unless use_default_loopback is false
// (GeolocationData::default in its src/config/geolocation.rs).
var defaultLoopbackGeo = map[string]any{
	"as_name": "Fastly, Inc", "as_number": 54113, "area_code": 415,
	"city": "San Francisco", "conn_speed": "broadband", "conn_type": "wired",
	"continent": "NA", "country_code": "US", "country_code3": "USA",
	"country_name": "United States of America", "latitude": 37.77869, "longitude": -122.39557,
	"metro_code": 0, "postal_code": "94107", "proxy_description": "?", "proxy_type": "?",
	"region": "CA", "utc_offset": -700,
}

// geoRecord is the record for ip: the mapping's, else the default one for
// a loopback address (127.0.0.0/8 or ::1, as Rust's is_loopback: not an
// IPv4-mapped one), else none.
func (m *Manifest) geoRecord(ip netip.Addr) (map[string]any, bool) {
	if rec, ok := m.Geo[ip.String()]; ok {
		return rec, true
	}
	if !m.GeoNoDefaultLoopback && (ip.Is4() && ip.IsLoopback() || ip == netip.IPv6Loopback()) {
		return defaultLoopbackGeo, true
	}
	return nil, false
}

func init() {
	register(map[string]hostcall{
		"fastly_geo.lookup": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			octets, ok := read(m, a[0], a[1])
			if !ok {
				return stInval
			}
			ip, ok := netip.AddrFromSlice(octets)
			if !ok {
				return stInval
			}
			rec, found := s.host.manifest.geoRecord(ip)
			if !found {
				// Viceroy answers an address it has no record for with
				// empty data, as the platform does, not with {}.
				return writeBuf(m, a[2], a[3], a[4], nil)
			}
			doc, err := serdeJSON(rec)
			if err != nil {
				return stError
			}
			return writeBuf(m, a[2], a[3], a[4], doc)
		},
	})
}
