// Command draw checks a scheduled sale's draw: given the key the room
// revealed after the sale opened (the queue JSON's event.draw_key) and the
// range of pre-queue tickets, it prints the commitment the key hashes to
// (compare it with the event.draw_commitment published before the sale)
// and the tickets in the order the draw called them.
//
//	go run ./tools/cmd/draw -key <draw_key> -first 1 -last 500
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/edgequeue/waitingroom/draw"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "draw:", err)
		os.Exit(2)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("draw", flag.ContinueOnError)
	key := fs.String("key", "", "the revealed draw key (event.draw_key)")
	first := fs.Int64("first", 0, "the pre-queue's first ticket")
	last := fs.Int64("last", 0, "the pre-queue's last ticket")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *key == "" {
		return errors.New("-key is required")
	}
	order, err := draw.Order(*key, *first, *last)
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(*key))
	w := bufio.NewWriter(out)
	fmt.Fprintf(w, "commitment %s\n", hex.EncodeToString(sum[:]))
	for place, ticket := range order {
		fmt.Fprintf(w, "%d\t%d\n", place+1, ticket)
	}
	return w.Flush()
}
