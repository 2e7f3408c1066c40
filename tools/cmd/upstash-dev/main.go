// Command upstash-dev serves the Upstash REST API locally in front of a
// redis-server, for `make serve` and for trying the waiting room by hand.
package main

import (
	"flag"
	"log"
	"net/http"

	"github.com/edgequeue/waitingroom/tools/upstashdev"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8079", "address to serve the REST API on")
	redis := flag.String("redis", "127.0.0.1:6379", "redis-server address")
	token := flag.String("token", "dev-upstash-token", "REST token to accept")
	flag.Parse()
	log.Printf("upstash-dev: REST on http://%s, Redis at %s", *addr, *redis)
	log.Fatal(http.ListenAndServe(*addr, upstashdev.New(*redis, *token)))
}
