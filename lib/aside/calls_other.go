//go:build !(linux && amd64)

package aside

import (
	"errors"
	"time"
)

// NewCalls: running a program aside by vfork is written for linux/amd64 only; elsewhere
// callers start a child of this binary (Start).
func NewCalls() (*Calls, error) {
	return nil, errors.New("aside: system calls run aside only on linux/amd64")
}

func runChild(time.Time, []Step, []any) error { panic("unreachable") }

func restore(*Calls) {}
