package fastlyhost

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/api"
)

// The downstream calls, as Viceroy answers them (src/wiggle_abi/
// http_downstream.rs): they take a request handle and read the metadata of
// the client request behind it, so a reused sandbox sees each request's
// own. A request the guest made itself has no such metadata.

// stLimitExceeded is FastlyStatus LimitExceeded.
const stLimitExceeded Status = 13

// nextRequestTimeout is the next_request_options_mask bit for timeout_ms.
const nextRequestTimeout = 1 << 1

// regionNone is the compliance region Viceroy gives every request.
const regionNone = "none"

// metadata returns the client request behind request handle h: Badf for an
// unknown handle, Error (Viceroy's MissingDownstreamMetadata) for a request
// the guest made.
func metadata(ctx context.Context, s *state, h uint64) (*downstream, Status) {
	if s.reqs[u32(h)] == nil {
		return nil, stBadf
	}
	d := sandboxOf(ctx).meta[u32(h)]
	if d == nil {
		return nil, stError
	}
	return d, stOK
}

// absent answers a call for metadata Viceroy does not have: None for a
// client request.
func absent(ctx context.Context, s *state, _ api.Memory, a []uint64) Status {
	if _, st := metadata(ctx, s, a[0]); st != stOK {
		return st
	}
	return stNone
}

// botHeader answers from one of the X-Fastly-Bot-* headers the client
// sent, by which Viceroy lets a test stand in for bot detection.
func botHeader(name string, answer func(m api.Memory, a []uint64, v string, found bool) Status) hostcall {
	return func(ctx context.Context, s *state, m api.Memory, a []uint64) Status {
		d, st := metadata(ctx, s, a[0])
		if st != stOK {
			return st
		}
		v, found := d.header[name]
		if !found {
			return answer(m, a, "", false)
		}
		return answer(m, a, v[0], true)
	}
}

// botFlag writes whether v is "true", as a u32.
func botFlag(m api.Memory, a []uint64, v string, _ bool) Status {
	var b uint32
	if v == "true" {
		b = 1
	}
	return write32(m, a[1], b)
}

// botText writes v, or answers None when the header is missing.
func botText(m api.Memory, a []uint64, v string, found bool) Status {
	if !found {
		return stNone
	}
	return writeBuf(m, a[1], a[2], a[3], []byte(v))
}

// botCategories are the category names Viceroy reads, by kind.
var botCategories = []string{
	"none", "suspected", "accessibility", "ai-crawler", "ai-fetcher", "content-fetcher",
	"monitoring-site-tools", "online-marketing", "page-preview", "platform-integration",
	"research", "search-engine-crawler", "search-engine-optimization", "security-tools", "headless",
}

// botKind writes the kind of the category header: a name, or a number.
func botKind(m api.Memory, a []uint64, v string, found bool) Status {
	if !found {
		return stNone
	}
	v = strings.ToLower(v)
	for kind, name := range botCategories {
		if v == name {
			return write32(m, a[1], uint32(kind))
		}
	}
	kind, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return stNone
	}
	return write32(m, a[1], uint32(kind))
}

func init() {
	calls := map[string]hostcall{
		"fastly_http_req.body_downstream_get": func(ctx context.Context, _ *state, m api.Memory, a []uint64) Status {
			sb := sandboxOf(ctx)
			return both(write32(m, a[0], sb.handle), write32(m, a[1], sb.handle))
		},
		"fastly_http_resp.send_downstream": func(ctx context.Context, s *state, m api.Memory, a []uint64) Status {
			r, b := s.resps[u32(a[0])], s.bodies[u32(a[1])]
			if r == nil || b == nil {
				return stBadf
			}
			sb := sandboxOf(ctx)
			d := sb.current
			if r.status < 200 {
				// Viceroy's DownstreamResponseState::send: a 103 Early
				// Hints is accepted and dropped, as hyper cannot send it;
				// any other 1xx is refused.
				s.mu.Lock()
				sent := s.sent
				s.mu.Unlock()
				switch {
				case sent:
					return stError
				case r.status == 103:
					return stOK
				}
				return stInval
			}
			streaming := a[2] != 0
			if st := s.sendDownstream(r, b, streaming); st != stOK {
				return st
			}
			if !streaming {
				sb.responded(d)
				return stOK
			}
			b.mu.Lock()
			b.close = func(bool) { sb.responded(d) }
			b.mu.Unlock()
			return stOK
		},

		"fastly_http_downstream.next_request": func(ctx context.Context, s *state, m api.Memory, a []uint64) Status {
			sb := sandboxOf(ctx)
			ms, ok := m.ReadUint64Le(u32(a[1]))
			if !ok {
				return stInval
			}
			if sb.promise != 0 {
				return stLimitExceeded
			}
			timeout := nextReqTimeout
			if a[0]&nextRequestTimeout != 0 && ms < uint64(nextReqTimeout/time.Millisecond) {
				timeout = time.Duration(ms) * time.Millisecond
			}
			var w *waiter
			if sb.accepted < nextReqAcceptMax {
				w = sb.host.register()
			}
			if w == nil {
				sb.accepted = nextReqAcceptMax
			} else {
				sb.accepted++
			}
			sb.promise = put(s, &nextRequest{waiter: w, deadline: time.Now().Add(timeout)})
			sb.current.asked = true
			sb.release(sb.current)
			return write32(m, a[2], sb.promise)
		},
		"fastly_http_downstream.next_request_wait": func(ctx context.Context, s *state, m api.Memory, a []uint64) Status {
			sb := sandboxOf(ctx)
			s.mu.Lock()
			sent := s.sent
			s.mu.Unlock()
			if !sent {
				// Viceroy: "cannot accept requests w/o handling the
				// outstanding one".
				return stUnsupported
			}
			p, ok := lookup[*nextRequest](s, a[0])
			if !ok {
				return stBadf
			}
			delete(s.objects, u32(a[0]))
			sb.promise = 0
			d := sb.await(ctx, p)
			if d == nil {
				return stNone
			}
			sb.take(d)
			return both(write32(m, a[1], sb.handle), write32(m, a[2], sb.handle))
		},
		"fastly_http_downstream.next_request_abandon": func(ctx context.Context, s *state, m api.Memory, a []uint64) Status {
			sb := sandboxOf(ctx)
			p, ok := lookup[*nextRequest](s, a[0])
			if !ok {
				return stBadf
			}
			delete(s.objects, u32(a[0]))
			sb.promise = 0
			if p.waiter != nil {
				if d := sb.host.withdraw(p.waiter); d != nil {
					sb.host.spawn(d)
				}
			}
			return stOK
		},

		"fastly_http_downstream.downstream_client_ip_addr": func(ctx context.Context, s *state, m api.Memory, a []uint64) Status {
			d, st := metadata(ctx, s, a[0])
			if st != stOK {
				return st
			}
			return writeIP(m, d.client, a[1], a[2])
		},
		"fastly_http_downstream.downstream_server_ip_addr": func(ctx context.Context, s *state, m api.Memory, a []uint64) Status {
			d, st := metadata(ctx, s, a[0])
			if st != stOK {
				return st
			}
			return writeIP(m, d.server, a[1], a[2])
		},
		"fastly_http_downstream.downstream_client_request_id": func(ctx context.Context, s *state, m api.Memory, a []uint64) Status {
			d, st := metadata(ctx, s, a[0])
			if st != stOK {
				return st
			}
			return writeBuf(m, a[1], a[2], a[3], []byte(fmt.Sprintf("%032x", d.id)))
		},
		"fastly_http_downstream.downstream_compliance_region": func(ctx context.Context, s *state, m api.Memory, a []uint64) Status {
			if _, st := metadata(ctx, s, a[0]); st != stOK {
				return st
			}
			return writeBuf(m, a[1], a[2], a[3], []byte(regionNone))
		},
		"fastly_http_downstream.downstream_original_header_names": func(ctx context.Context, s *state, m api.Memory, a []uint64) Status {
			d, st := metadata(ctx, s, a[0])
			if st != stOK {
				return st
			}
			return writeMulti(m, headerNames(d.header), a[1], a[2], a[3], a[4], a[5])
		},
		"fastly_http_downstream.downstream_original_header_count": func(ctx context.Context, s *state, m api.Memory, a []uint64) Status {
			d, st := metadata(ctx, s, a[0])
			if st != stOK {
				return st
			}
			// hyper's HeaderMap::len counts values, not names.
			n := 0
			for _, v := range d.header {
				n += len(v)
			}
			return write32(m, a[1], uint32(n))
		},
		"fastly_http_downstream.downstream_client_ddos_detected": func(_ context.Context, _ *state, m api.Memory, a []uint64) Status {
			return write32(m, a[1], 0) // for any handle, as Viceroy
		},
		"fastly_http_downstream.fastly_key_is_valid": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			if s.reqs[u32(a[0])] == nil {
				return stBadf
			}
			// No key is valid: the host does not read [local_server]
			// fake_valid_fastly_keys (the manifest lists it as ignored).
			return write32(m, a[1], 0)
		},
		"fastly_http_downstream.downstream_bot_analyzed": botHeader("X-Fastly-Bot-Analyzed", botFlag),
		"fastly_http_downstream.downstream_bot_detected": botHeader("X-Fastly-Bot-Detected", botFlag),
		"fastly_http_downstream.downstream_bot_verified": botHeader("X-Fastly-Bot-Verified", func(m api.Memory, a []uint64, v string, found bool) Status {
			if !found {
				return stNone
			}
			return botFlag(m, a, v, found)
		}),
		"fastly_http_downstream.downstream_bot_name":          botHeader("X-Fastly-Bot-Name", botText),
		"fastly_http_downstream.downstream_bot_category":      botHeader("X-Fastly-Bot-Category", botText),
		"fastly_http_downstream.downstream_bot_category_kind": botHeader("X-Fastly-Bot-Category", botKind),
	}
	for _, name := range []string{
		"downstream_client_h2_fingerprint", "downstream_client_oh_fingerprint",
		"downstream_tls_cipher_openssl_name", "downstream_tls_protocol", "downstream_tls_client_servername",
		"downstream_tls_client_hello", "downstream_tls_raw_client_certificate", "downstream_tls_client_cert_verify_result",
		"downstream_tls_ja3_md5", "downstream_tls_ja4",
		"downstream_resvpnproxy_is_anonymous", "downstream_resvpnproxy_is_anonymous_vpn",
		"downstream_resvpnproxy_is_hosting_provider", "downstream_resvpnproxy_is_proxy_over_vpn",
		"downstream_resvpnproxy_is_public_proxy", "downstream_resvpnproxy_is_relay_proxy",
		"downstream_resvpnproxy_is_residential_proxy", "downstream_resvpnproxy_is_smart_dns_proxy",
		"downstream_resvpnproxy_is_tor_exit_node", "downstream_resvpnproxy_is_vpn_datacenter",
		"downstream_resvpnproxy_vpn_service_name",
	} {
		calls["fastly_http_downstream."+name] = absent
	}
	register(calls)
}
