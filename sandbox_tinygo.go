//go:build tinygo

package main

// defaultSandboxRequests is the TinyGo build's: a fresh sandbox per request,
// because TinyGo 0.33's collector makes a reused sandbox's requests cost
// more CPU than a fresh one's (BENCHMARKS.md, "Reusable sandboxes").
// sandbox_requests still sets it.
const defaultSandboxRequests = 1
