package edge

import (
	"context"
	"errors"
	"strings"

	"github.com/edgequeue/waitingroom/api"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// apiPolicy is the admin API's Content-Security-Policy: its answers are
// data, never a page to render.
const apiPolicy = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'"

func (q *request) adminAPI(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
	secure(w.Header(), apiPolicy)
	h := &api.Handler{Path: q.settings.APIPath, Logf: q.Logf}
	if client := clientKey(r); q.Limits != nil && client != "" {
		// One budget of wrong guesses per client for the panel's
		// password and the API's token alike.
		h.Guesses = guesses{q.Handler, client}
	}
	token, err := q.secrets.Get(SecretAPIToken)
	switch {
	case errors.Is(err, ErrStoreNotLinked):
		h.Disabled = storeNotLinked(SecretStore, "fastly secret-store list").Error()
	case err == nil && !q.Local && IsDevSecret(SecretAPIToken, token):
		h.Disabled = secretProblem(SecretAPIToken, "holds the public development value from fastly.toml's [local_server]").Error()
	case err == nil:
		h.Token = []byte(strings.TrimSpace(string(token)))
	case !errors.Is(err, ErrNotFound):
		q.Logf("api: secret %s: %v", SecretAPIToken, err)
		h.Disabled = "secret " + SecretAPIToken + " cannot be read; see the log"
	}
	if h.Disabled == "" && api.Token().Problem(h.Token) == "" {
		if op, keys, err := q.operator(); err == nil {
			h.Operator, h.Client = op, ClientHash(keys, r)
		} else {
			q.Logf("api: %v", err)
			h.Unavailable = describe(err)
		}
	}
	h.ServeHTTP(ctx, w, r)
}
