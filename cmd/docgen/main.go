// Command docgen writes the generated reference pages (lib/docgen) into the tree: `make
// docs` runs it from the repository's root. A development tool, never installed.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/resctrl-mon/resctrl-mon/lib/docgen"
)

func main() {
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	pages, err := docgen.Pages(*root)
	if err == nil {
		err = docgen.Write(*root, pages)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
	for _, p := range pages {
		fmt.Println("wrote", p.Path)
	}
}
