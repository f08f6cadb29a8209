package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	pages, err := Pages(*root)
	if err == nil {
		err = Write(*root, pages)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
	for _, p := range pages {
		fmt.Println("wrote", p.Path)
	}
}
