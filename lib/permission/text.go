package permission

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"
)

// ClassifyText classifies a refusal from its message alone: a failure another process
// recorded in the state dir (failures.jsonl keeps the error's text, not its errno). The
// errno is found by the kernel's words for it, the path as the word before them (an
// *fs.PathError prints "op path: words"). A message that already carries a cause (the
// writer ran it through Explain) keeps it; otherwise the writer's capabilities are
// unknown.
func ClassifyText(msg string) (*Denial, bool) {
	errno, at := syscall.Errno(0), -1
	for _, e := range []syscall.Errno{syscall.EACCES, syscall.EPERM, syscall.EROFS} {
		if i := strings.LastIndex(msg, ": "+e.Error()); i >= 0 && i > at {
			errno, at = e, i
		}
	}
	if at < 0 {
		return nil, false
	}
	path := ""
	if sp := strings.LastIndexByte(msg[:at], ' '); sp >= 0 && strings.HasPrefix(msg[sp+1:at], "/") {
		path = msg[sp+1 : at]
	}
	if c, hint, ok := explained(msg); ok {
		return &Denial{Path: path, Errno: errno, Cause: c, Hint: hint, err: errors.New(strings.TrimSuffix(msg[:strings.LastIndex(msg, " [")], " "))}, true
	}
	var err error = errno
	if path != "" {
		err = &fs.PathError{Op: "write", Path: path, Err: errno}
	}
	d, ok := Classify(err, Process{})
	if !ok {
		return nil, false
	}
	d.err = errors.New(msg)
	return d, true
}

// explained finds the " [cause: hint]" Denial.Error appends.
func explained(msg string) (Cause, string, bool) {
	i := strings.LastIndex(msg, " [")
	if i < 0 || !strings.HasSuffix(msg, "]") {
		return "", "", false
	}
	c, hint, ok := strings.Cut(msg[i+2:len(msg)-1], ": ")
	if !ok {
		return "", "", false
	}
	for _, known := range []Cause{CauseLSM, CauseFileMode, CauseTaskOwner, CauseCapability, CauseReadOnly, CauseUnknownWriter} {
		if Cause(c) == known {
			return known, hint, true
		}
	}
	return "", "", false
}
