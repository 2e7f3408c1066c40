package edge

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// ErrStoreNotLinked is what Config and Secrets return when the service has
// no store of the name the code opens. `fastly compute publish` links each
// store under its own name, and when a store of that name exists already it
// offers to create one under another name instead: such a store is linked
// under the new name, which this code never opens.
var ErrStoreNotLinked = errors.New("store not linked to this service under that name")

// ErrBackendUnresolvable marks a backend request that failed because the
// backend's host name does not exist in DNS: its address is mistyped, or
// still the placeholder fastly.toml offers as the default (the Fastly CLI
// deploys the default when Enter is pressed at its prompt).
var ErrBackendUnresolvable = errors.New("backend host name does not resolve")

// UpstashBackendURL is the store's URL when the config store has no
// upstash_url and the Upstash transport is a Fastly backend. The backend
// decides where the request goes, and `fastly compute publish` sets its
// override host (the Host header Upstash routes by) to the address typed at
// its prompt, so this URL's host is never used and the Upstash host is typed
// once, at the upstash backend's prompt.
const UpstashBackendURL = "https://upstash"

// SetupError says what the operator has to set before the waiting room can
// run, and the command that sets it. Its message is the log line; Setting is
// also named on the visitors' 503 page.
type SetupError struct {
	// Setting names what is missing or wrong, e.g. "secret signing_keys".
	Setting string
	// Problem says what is wrong with it, e.g. "is missing".
	Problem string
	// Fix is the command (or commands) that set it.
	Fix string
}

func (e *SetupError) Error() string {
	return fmt.Sprintf("%s %s; set it with: %s", e.Setting, e.Problem, e.Fix)
}

// How the log lines name a store's id: the commands need it, and only the
// Fastly API knows it.
const (
	configStoreID = "<id of " + ConfigStore + " in `fastly config-store list`>"
	secretStoreID = "<id of " + SecretStore + " in `fastly secret-store list`>"
	// activate makes a cloned service version live.
	activate = "; then fastly service version activate --version=latest"
)

// secretProblem is the setup error for a secret that is absent or unusable.
func secretProblem(name, problem string) *SetupError {
	fix := "fastly secret-store-entry create --recreate-allow --store-id=" + secretStoreID + " --name=" + name +
		" (it asks for the value)"
	if name == SecretSigningKeys {
		// A key set has a form people get wrong by hand: generate it.
		fix = `echo "k1:$(openssl rand -base64 32)" | fastly secret-store-entry create --recreate-allow --stdin --store-id=` +
			secretStoreID + " --name=" + name
	}
	return &SetupError{Setting: "secret " + name, Problem: problem, Fix: fix}
}

// upstashURLProblem is the setup error for an unusable upstash_url.
func upstashURLProblem(problem string) *SetupError {
	return &SetupError{Setting: "config " + KeyUpstashURL, Problem: problem,
		Fix: "fastly config-store-entry delete --store-id=" + configStoreID + " --key=" + KeyUpstashURL +
			" (the upstash backend then says where the database is), or fastly config-store-entry update --upsert --store-id=" +
			configStoreID + " --key=" + KeyUpstashURL + " --value=https://<your database>.upstash.io"}
}

// storeNotLinked is the setup error for a store the service cannot open.
func storeNotLinked(store, list string) *SetupError {
	return &SetupError{Setting: store, Problem: "is not linked to this service under that name",
		Fix: "fastly service resource-link create --version=latest --autoclone --name=" + store +
			" --resource-id=<its id in `" + list + "`>" + activate}
}

// backendUnresolvable is the setup error for a backend whose host name does
// not exist. The CLI set the backend's override host and TLS names to the
// address typed at publish, so all of them change together.
func backendUnresolvable(backend, example string) *SetupError {
	return &SetupError{Setting: "backend " + backend, Problem: "has a host name that does not resolve (DNS)",
		Fix: "H=" + example + "; fastly service backend update --version=latest --autoclone --name=" + backend +
			` --address="$H" --override-host="$H" --ssl-cert-hostname="$H" --ssl-sni-hostname="$H"` + activate}
}

// IsPlaceholderHost reports whether host is a name reserved for examples
// (RFC 2606 and 6761: example.com, .net, .org, *.example, *.invalid), as the
// defaults fastly.toml offers at the CLI's prompts are, or the Upstash host
// earlier versions of fastly.toml offered: no site or database has one, so
// a value holding one was never set.
func IsPlaceholderHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "your-database.upstash.io" {
		return true
	}
	for _, d := range []string{"example.com", "example.net", "example.org"} {
		if h == d || strings.HasSuffix(h, "."+d) {
			return true
		}
	}
	return strings.HasSuffix(h, ".example") || strings.HasSuffix(h, ".invalid")
}

// The development-only secrets fastly.toml's [local_server] gives the local
// host. Anyone can read them in the repository: a deployed service holding
// one would let anyone forge passes, open the admin panel or steer the
// line through the API.
const (
	devUpstashToken  = "dev-upstash-token"
	devSigningKey    = "ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoM="
	devAdminPassword = "dev-admin-password"
	devAPIToken      = "dev-api-token-for-local-use-only-0123456789"
)

// IsDevSecret reports whether value is the development-only value of the
// secret name that fastly.toml's [local_server] publishes (for signing_keys:
// a key set holding the development key under any key id).
func IsDevSecret(name string, value []byte) bool {
	v := string(bytes.TrimSpace(value))
	switch name {
	case SecretUpstashToken:
		return v == devUpstashToken
	case SecretAdminPassword:
		return v == devAdminPassword
	case SecretAPIToken:
		return v == devAPIToken
	case SecretSigningKeys:
		return strings.Contains(v, devSigningKey)
	}
	return false
}

// upstashURL checks the config store's upstash_url.
func upstashURL(v string) (string, *SetupError) {
	rest, ok := strings.CutPrefix(v, "https://")
	if !ok {
		rest, ok = strings.CutPrefix(v, "http://")
	}
	host := rest
	if i := strings.IndexAny(host, "/:?#"); i >= 0 {
		host = host[:i]
	}
	switch {
	case !ok || host == "":
		return "", upstashURLProblem(fmt.Sprintf("is %q, not an http(s) URL", v))
	case IsPlaceholderHost(host):
		return "", upstashURLProblem(fmt.Sprintf("is the placeholder %q", v))
	}
	return v, nil
}
