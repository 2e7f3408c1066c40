package devstack

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Clients are HTTP clients that each connect from one loopback address,
// so the edge sees a different visitor (client IP) per address. They
// follow no redirect: a suite checks the edge's own answer.
type Clients struct {
	mu sync.Mutex
	by map[string]*http.Client
}

// From is the client that connects from ip.
func (c *Clients) From(ip string) *http.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	if hc, ok := c.by[ip]; ok {
		return hc
	}
	if c.by == nil {
		c.by = map[string]*http.Client{}
	}
	d := &net.Dialer{Timeout: 30 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	hc := &http.Client{
		Transport:     &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 4},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       90 * time.Second,
	}
	c.by[ip] = hc
	return hc
}

// Send sends one request from ip to url, with header's values added, and
// reads the whole answer.
func (c *Clients) Send(ip, method, url string, body []byte, header http.Header) (*http.Response, []byte, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := c.From(ip).Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}
