// Command capturehook is the OCI hook that records what a runtime really sends: the state it
// writes on stdin, as it wrote it, and the parts of the bundle's config.json that could tell
// which pod a container belongs to and whether it is the pod's infra container (annotations,
// process.args, hostname, linux.cgroupsPath, linux.namespaces). The identity fixtures in
// lib/identity/testdata are made from its records, so they are what runc, crun, podman and
// CRI-O sent, not what we believe they send. The record format and its file names are
// test/e2e/capture's (Write); test/e2e's Capturer registers this hook and reads the records.
//
// Usage: capturehook DIR STAGE, with the state on stdin. Each call writes one record into DIR.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/e2e/capture"
)

func main() {
	// When the runtime called: records sort by it, in the order the calls came.
	at := time.Now()
	if err := run(at); err != nil {
		// runc shows a failing hook's stderr; crun drops it, but the container then fails to
		// start, which the capturing test sees.
		fmt.Fprintln(os.Stderr, "capturehook:", err)
		os.Exit(1)
	}
}

func run(at time.Time) error {
	if len(os.Args) != 3 {
		return errors.New("usage: capturehook DIR STAGE (state on stdin)")
	}
	// To EOF: a runtime may fail with EPIPE on a hook that stops reading early.
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		return fmt.Errorf("read state: %w", err)
	}
	return capture.Write(os.Args[1], os.Args[2], at, raw)
}
