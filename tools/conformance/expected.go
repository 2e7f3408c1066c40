package conformance

// About says what each package exercises, for the README's table.
var About = map[string]string{
	"integration_tests/_version":           "the toolchain's version (logs it)",
	"integration_tests/acl":                "ACLs: `fastly_acl` open and lookup, `[local_server.acls]`",
	"integration_tests/async_select":       "`fsthttp` async sends and select over pending requests",
	"integration_tests/backend":            "static and dynamic backends (the dynamic one reaches the stand-in), `fastly_backend` introspection",
	"integration_tests/byte_repeater":      "streaming a backend's body",
	"integration_tests/compute_runtime":    "vCPU time and heap size, `fastly_compute_runtime`",
	"integration_tests/config_store":       "config stores, `[local_server.config_stores]`",
	"integration_tests/device_detection":   "device detection, `[local_server.device_detection]`",
	"integration_tests/geolocation":        "geolocation, `[local_server.geolocation]`",
	"integration_tests/hello_world":        "the recorder, no host call",
	"integration_tests/internal_debug":     "the SDK's internal debug build",
	"integration_tests/kvstore":            "KV stores: lookup, insert, delete, list, `[local_server.kv_stores]`",
	"integration_tests/request_downstream": "the downstream request and its client facts",
	"integration_tests/request_upstream":   "requests to backends: headers, bodies, methods",
	"integration_tests/secret_store":       "secret stores, `[local_server.secret_stores]`, `from_bytes`",
	"integration_tests/shielding":          "shielding, `[local_server.shielding_sites]`",
	"integration_tests/status":             "response status codes",
	"integration_tests/streaming_close":    "closing a streamed response early",
	"end_to_end_tests/bot-detection":       "bot detection, through a served service",
	"end_to_end_tests/loopback":            "a served service reached through a backend",
	"end_to_end_tests/serve-many":          "reusable sandboxes: `fsthttp.ServeMany`, next-request calls",
	"cache/core":                           "the core cache API (examples: compile only)",
	"configstore":                          "config store unit tests",
	"edgedict":                             "edge dictionary unit tests",
	"erl":                                  "Edge Rate Limiting (examples: compile only)",
	"fsthttp":                              "`fsthttp` unit tests",
	"fsthttp/imageopto":                    "image optimizer options",
}

// Expected is what each package does against the host under each build,
// with the reason wherever it does not pass. A result that differs from
// it fails `make test`: a regression, or a package newly passing whose
// line here (and the README's table, from `make conformance`) should say
// so.
var Expected = map[string]map[Build]Expectation{
	"integration_tests/_version":           passes,
	"integration_tests/acl":                passes,
	"integration_tests/async_select":       passes,
	"integration_tests/backend":            passes,
	"integration_tests/byte_repeater":      passes,
	"integration_tests/compute_runtime":    passes,
	"integration_tests/config_store":       passes,
	"integration_tests/device_detection":   passes,
	"integration_tests/geolocation":        passes,
	"integration_tests/hello_world":        passes,
	"integration_tests/internal_debug":     passes,
	"integration_tests/kvstore":            passes,
	"integration_tests/request_downstream": passes,
	"integration_tests/request_upstream":   passes,
	"integration_tests/secret_store":       passes,
	"integration_tests/shielding":          passes,
	"integration_tests/status":             passes,
	"integration_tests/streaming_close":    passes,
	"end_to_end_tests/bot-detection":       passes,
	"end_to_end_tests/loopback":            passes,
	"end_to_end_tests/serve-many": {
		Go: {Status: Pass, Race: serveManyRace}, TinyGo: {Status: Pass, Race: serveManyRace},
	},
	"configstore":       passes,
	"edgedict":          passes,
	"fsthttp":           passes,
	"fsthttp/imageopto": passes,
	// Their tests are examples without an Output comment: they compile
	// and never run, so no host call is exercised.
	"cache/core": examplesOnly,
	"erl":        examplesOnly,
}

// serveManyRace is why serve-many runs again after a failure (seen once in
// CI, under TinyGo on a loaded machine).
const serveManyRace = "The test's second request races the guest's next_request call: fsthttp streams the first response, so the test may send again before the guest asks, and a request that finds no sandbox waiting gets a fresh one, in Viceroy as here."

var (
	passes       = map[Build]Expectation{Go: {Status: Pass}, TinyGo: {Status: Pass}}
	examplesOnly = map[Build]Expectation{
		Go:     {Status: NoTests, Why: "examples without output: they compile, and no test runs"},
		TinyGo: {Status: NoTests, Why: "examples without output: they compile, and no test runs"},
	}
)
