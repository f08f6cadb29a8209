// Package aside runs work that may hang in the kernel in a process of its own. A resctrl
// write or mkdir the kernel has begun is not abandoned (the kernel's rdtgroup mutex is taken
// uninterruptibly; FUSE, the simulator, waits for its answer even for a killed caller), and
// a process does not end, nor execve, while one of its threads is still inside such a call.
// The caller stops waiting at its budget and goes on (ends, or execs the runtime); the child
// finishes, or hangs, on its own.
//
// Two kinds of child: this binary again (Start), given one request and sending back its
// reply, for Go work (the OCI hook's worker, the runtime wrapper's joiner); and a vfork
// child making a short program of raw system calls (Calls), for a few calls without a
// second Go start (the hook's join).
package aside

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// Child is a started child, waiting for its request.
type Child struct {
	Cmd *exec.Cmd
	// Request is the write end of the child's fd 3; Send closes it.
	Request *os.File
	// Reply is the read end of the child's fd 4.
	Reply *os.File
}

// Start starts this binary (/proc/self/exe: the one this process runs, even if an upgrade
// replaced its path) as prog with the single argument arg. The child gets /dev/null for
// stdio (whoever started the caller may wait until every copy of its pipes is closed) and a
// session of its own (nothing aimed at the caller's process group interrupts it halfway).
func Start(prog, arg string) (*Child, error) {
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer reqR.Close()
	repR, repW, err := os.Pipe()
	if err != nil {
		reqW.Close()
		return nil, err
	}
	defer repW.Close()
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{prog, arg}, ExtraFiles: []*os.File{reqR, repW},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	if err := cmd.Start(); err != nil {
		reqW.Close()
		repR.Close()
		return nil, err
	}
	return &Child{Cmd: cmd, Request: reqW, Reply: repR}, nil
}

// Send writes v to the child as JSON and closes its request. A request is far smaller than
// a pipe's buffer: the write does not wait for the child.
func (c *Child) Send(v any) error {
	b, err := json.Marshal(v)
	if err == nil {
		_, err = c.Request.Write(b)
	}
	return errors.Join(err, c.Request.Close())
}

// IfAsked runs child and exits with its status when this process was started as one (its
// only argument arg), its request on fd 3 and its reply on fd 4. Mains call it first, and so
// does TestMain in every test binary whose code starts such a child, since there the child
// is the test binary itself.
func IfAsked(arg string, child func(request io.Reader, reply io.Writer) int) {
	if len(os.Args) == 2 && os.Args[1] == arg {
		os.Exit(child(os.NewFile(3, "request"), os.NewFile(4, "reply")))
	}
}
