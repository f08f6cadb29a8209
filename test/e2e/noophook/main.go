// Command noophook is the benchmark's baseline: a Go hook that reads the state from stdin to
// EOF and exits, as cheap as a hook binary can be.
package main

import (
	"io"
	"os"
)

func main() {
	_, _ = io.Copy(io.Discard, os.Stdin)
}
