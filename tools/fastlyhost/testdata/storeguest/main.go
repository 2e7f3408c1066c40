// Command storeguest is a WASI command for the store tests: each argument
// is one operation on the KV, config, dictionary or secret stores, run in
// order, each printing one line with its outcome.
//
//	lookup KEY                 value|metadata|error
//	insert KEY VALUE [OPT...]  error; OPT: mode=add|append|prepend,
//	                           meta=M, ttl=SECONDS, ifgen=G|last
//	delete KEY                 error
//	list PREFIX LIMIT CURSOR   each page's keys, then the error
//	config STORE KEY           value|error, through configstore
//	dict STORE KEY             value|error, through edgedict
//	frombytes TEXT             the secret's plaintext|error
//	sleep MS
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/fastly/compute-sdk-go/configstore"
	"github.com/fastly/compute-sdk-go/edgedict"
	"github.com/fastly/compute-sdk-go/kvstore"
	"github.com/fastly/compute-sdk-go/secretstore"
)

func main() {
	store, err := kvstore.Open("kv")
	if err != nil {
		fmt.Println("open:", err)
		return
	}
	var lastGen uint64
	args := os.Args[1:]
	for len(args) > 0 {
		op := args[0]
		args = args[1:]
		switch op {
		case "lookup":
			e, err := store.Lookup(args[0])
			args = args[1:]
			if err != nil {
				fmt.Printf("||%v\n", err)
				continue
			}
			lastGen = e.Generation()
			fmt.Printf("%s|%s|<nil>\n", e.String(), e.Meta())
		case "insert":
			key, value := args[0], args[1]
			args = args[2:]
			var c kvstore.InsertConfig
			for len(args) > 0 && strings.Contains(args[0], "=") {
				k, v, _ := strings.Cut(args[0], "=")
				args = args[1:]
				switch k {
				case "mode":
					c.Mode = map[string]kvstore.InsertMode{"add": kvstore.InsertModeAdd, "append": kvstore.InsertModeAppend, "prepend": kvstore.InsertModePrepend}[v]
				case "meta":
					c.Metadata = []byte(v)
				case "ttl":
					n, _ := strconv.Atoi(v)
					c.TTLSec = uint32(n)
				case "ifgen":
					c.IfGenerationMatch, _ = strconv.ParseUint(v, 10, 64)
					if v == "last" {
						c.IfGenerationMatch = lastGen
					}
				}
			}
			fmt.Println(store.InsertWithConfig(key, strings.NewReader(value), &c))
		case "delete":
			fmt.Println(store.Delete(args[0]))
			args = args[1:]
		case "list":
			limit, _ := strconv.Atoi(args[1])
			it := store.List(&kvstore.ListConfig{Prefix: args[0], Limit: uint32(limit), Cursor: args[2]})
			args = args[3:]
			for it.Next() {
				fmt.Print(strings.Join(it.Page().Data, ","), ";")
			}
			fmt.Println(it.Err())
		case "config":
			d, err := configstore.Open(args[0])
			if err != nil {
				fmt.Printf("|%v\n", err)
			} else {
				v, err := d.Get(args[1])
				fmt.Printf("%s|%v\n", v, err)
			}
			args = args[2:]
		case "dict":
			d, err := edgedict.Open(args[0])
			if err != nil {
				fmt.Printf("|%v\n", err)
			} else {
				v, err := d.Get(args[1])
				fmt.Printf("%s|%v\n", v, err)
			}
			args = args[2:]
		case "frombytes":
			s, err := secretstore.SecretFromBytes([]byte(args[0]))
			args = args[1:]
			if err != nil {
				fmt.Printf("|%v\n", err)
				continue
			}
			v, err := s.Plaintext()
			fmt.Printf("%s|%v\n", v, err)
		case "sleep":
			ms, _ := strconv.Atoi(args[0])
			args = args[1:]
			time.Sleep(time.Duration(ms) * time.Millisecond)
		default:
			fmt.Println("unknown operation", op)
			return
		}
	}
}
