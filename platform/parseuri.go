//go:build fastlyinternalsetparseuri

package platform

import (
	"github.com/edgequeue/waitingroom/urlnorm"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// The SDK parses each request's target with url.ParseRequestURI and, when
// that fails (a path with a bad percent escape such as %zz), cannot hand
// the request over at all: the visitor gets a bare 500. urlnorm's parser
// keeps such a path so the edge can answer 400 saying what was wrong.
// tools/build-wasm builds with this tag; a build without it still works,
// with the SDK's 500 for those requests.
func init() { fsthttp.SetParseRequestURI(urlnorm.ParseRequestURI) }
