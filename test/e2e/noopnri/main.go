// Command noopnri is the floor for the NRI adapter's pod-start benchmark: an NRI plugin that
// subscribes to the adapter's events and does nothing with them, which is what any external
// plugin costs a runtime (a connection, and a round trip per subscribed event) before it
// does anything. It prints "synchronized" once the runtime has synchronised it, and exits
// when the runtime drops it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/containerd/nri/pkg/stub"

	"github.com/resctrl-mon/resctrl-mon/test/nritest"
)

func main() {
	socket := flag.String("nri-socket", "/var/run/nri/nri.sock", "the runtime's NRI socket")
	flag.Parse()
	s, err := stub.New(nritest.Noop{OnSync: func() { fmt.Println("synchronized") }}, stub.WithPluginName("noop"), stub.WithPluginIdx("90"), stub.WithSocketPath(*socket),
		stub.WithOnClose(func() { os.Exit(1) }))
	if err == nil {
		err = s.Run(context.Background())
	}
	fmt.Fprintf(os.Stderr, "noopnri: %v\n", err)
	os.Exit(1)
}
