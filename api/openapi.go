package api

import (
	_ "embed"

	"github.com/fastly/compute-sdk-go/fsthttp"
)

// openAPI is the API's OpenAPI 3.1 document, served as it is.
//
//go:embed openapi.json
var openAPI string

// docPath is where the document is served, below Handler.Path.
const docPath = "/openapi.json"

// serveDoc answers the OpenAPI document. It needs no token: it says
// nothing this repository does not, and tools that read it (generators,
// explorers) fetch it without credentials.
func (h *Handler) serveDoc(w fsthttp.ResponseWriter, r *fsthttp.Request) {
	if r.Method != fsthttp.MethodGet {
		w.Header().Set("Allow", fsthttp.MethodGet)
		h.refuse(w, r, &Error{Status: fsthttp.StatusMethodNotAllowed, Code: "method_not_allowed",
			Message: docPath + " takes GET, not " + r.Method})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(fsthttp.StatusOK)
	w.Write([]byte(openAPI))
}
