// Command platformguest is a WASI command for `fastlyhost run` that asks
// the host the platform facts its arguments name, through the SDK, and
// prints one line per answer:
//
//	acl NAME IP     the ACL lookup's prefix and action, or its error
//	device UA       the device's name and brand, or the error
//	shield NAME     the shield's info, or the error
//	vcpu            whether sleeping left the CPU time alone and busy
//	                work advanced it
//	heap            whether the heap size is non-zero
package main

import (
	"fmt"
	"net"
	"os"
	"time"

	"github.com/fastly/compute-sdk-go/acl"
	"github.com/fastly/compute-sdk-go/compute"
	"github.com/fastly/compute-sdk-go/device"
	"github.com/fastly/compute-sdk-go/shielding"
)

func main() {
	args := os.Args[1:]
	for len(args) > 0 {
		switch args[0] {
		case "acl":
			h, err := acl.Open(args[1])
			if err != nil {
				fmt.Printf("acl %s: %v\n", args[1], err)
			} else {
				r, err := h.Lookup(net.ParseIP(args[2]))
				fmt.Printf("acl %s %s: %s %s %v\n", args[1], args[2], r.Prefix, r.Action, err)
			}
			args = args[3:]
		case "device":
			d, err := device.Lookup(args[1])
			if err != nil {
				fmt.Printf("device: %v\n", err)
			} else {
				fmt.Printf("device: %s %s %v\n", d.Name(), d.Brand(), d.IsMobile())
			}
			args = args[2:]
		case "shield":
			s, err := shielding.ShieldFromName(args[1])
			if err != nil {
				fmt.Printf("shield %s: %v\n", args[1], err)
			} else {
				fmt.Printf("shield %s: running on %v\n", s.Name(), s.IsRunningOn())
			}
			args = args[2:]
		case "vcpu":
			start, _ := compute.GetVCPUTime()
			time.Sleep(500 * time.Millisecond)
			slept, _ := compute.GetVCPUTime()
			deadline := time.Now().Add(5 * time.Second)
			busy := slept
			for busy == slept && time.Now().Before(deadline) {
				busy, _ = compute.GetVCPUTime()
			}
			fmt.Printf("vcpu: sleep counted %v, busy work advanced %v\n", slept-start >= 200*time.Millisecond, busy > slept)
			args = args[1:]
		case "heap":
			mib, err := compute.GetHeapMiB()
			fmt.Printf("heap: non-zero %v %v\n", mib > 0, err)
			args = args[1:]
		default:
			fmt.Printf("unknown %q\n", args[0])
			os.Exit(2)
		}
	}
}
