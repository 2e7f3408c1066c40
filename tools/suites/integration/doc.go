// Package integration tests the edge packages natively against the real
// local stack: a redis-server, the Upstash REST stand-in over HTTP, and a
// real HTTP origin. It has no code of its own beyond this comment.
package integration
