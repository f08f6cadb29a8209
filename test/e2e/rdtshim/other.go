//go:build !(linux && amd64)

package main

import "errors"

var errArch = errors.New("only linux/amd64 is supported")

func launch([]string) (int, error) { return 0, errArch }
func filterAndExec([]string) error { return errArch }
func supervise() error             { return errArch }
