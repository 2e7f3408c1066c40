package fastlyhost

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"time"
)

// Status is a FastlyStatus, the result of every host call.
type Status = uint32

// The statuses the host returns (internal/abi/fastly/types.go in the SDK).
const (
	stOK          Status = 0
	stError       Status = 1
	stInval       Status = 2
	stBadf        Status = 3
	stBufLen      Status = 4
	stUnsupported Status = 5
	stNone        Status = 10
)

// request is a guest-visible HTTP request: the downstream one, or one the
// guest builds to send to a backend.
type request struct {
	method string
	uri    string
	header http.Header
}

// response is a guest-visible HTTP response: one the guest builds for the
// client, or one a backend returned.
type response struct {
	status int
	header http.Header
}

// body is a guest-visible body. Bytes the guest writes collect in buf,
// unless the body streams to a sink (a downstream response sent in
// streaming mode, or a streaming backend request), in which case they go
// straight through. Bytes the guest reads come from buf, then from src.
type body struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	src    io.Reader
	srcLen int64 // length of src when known, else -1
	sink   io.Writer
	flush  func()
	close  func(abandoned bool)
	closed bool
}

func newBody() *body { return &body{srcLen: -1} }

// reader returns everything the body holds or will hold, for sending it on.
func (b *body) reader() (io.Reader, int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	buffered := bytes.NewReader(b.buf.Bytes())
	if b.src == nil {
		return buffered, int64(buffered.Len())
	}
	n := int64(-1)
	if b.srcLen >= 0 {
		n = b.srcLen + int64(buffered.Len())
	}
	return io.MultiReader(buffered, b.src), n
}

// pending is a backend request in flight.
type pending struct {
	done chan struct{}
	resp *http.Response
	err  error
}

// state is one request's handle tables: every handle a guest holds points
// into them, and they die with the request.
type state struct {
	host     *Host
	w        http.ResponseWriter
	client   *http.Request
	started  time.Time
	next     uint32
	reqs     map[uint32]*request
	resps    map[uint32]*response
	bodies   map[uint32]*body
	pendings map[uint32]*pending
	logs     map[uint32]string
	// dynamic are the backends the guest registered (backends.go).
	dynamic map[string]dynamicBackend
	// objects holds the handles of the host call families that keep
	// their own kinds of object (see handles.go).
	objects map[uint32]any

	// mu guards sent, which is set once the guest has sent its response
	// downstream.
	mu   sync.Mutex
	sent bool
}

func (s *state) handle() uint32 {
	s.next++
	return s.next
}
