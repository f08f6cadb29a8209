package procevents

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// rcvBufSize is the receive buffer we ask for. Every task creation and exit on
// the host is a ~76-byte datagram (plus skb overhead, so the kernel's
// accounting is several hundred bytes each); the default rmem_default of a
// few hundred KiB overflows within a burst like a parallel build, and the
// simulator loses correctness with every dropped fork.
const rcvBufSize = 8 << 20

// recvBufLen bounds one datagram. The kernel sends one proc_event (40 bytes
// on 6.x) per datagram, so this is ample; MSG_TRUNC still catches surprises.
const recvBufLen = 64 << 10

// Conn is a subscription to the proc connector. Drain, Wait and Close are
// meant to be called from one goroutine; Lost may be called from any.
type Conn struct {
	mu   sync.Mutex
	fd   int // -1 once closed
	buf  []byte
	lost atomic.Uint64
}

// Open creates a netlink socket, joins the CN_IDX_PROC multicast group and
// subscribes to all process events. Older kernels require CAP_NET_ADMIN
// (bind fails with EPERM); newer ones (6.18 was observed) let any user
// subscribe. Either way it must run in the initial user, pid and network
// namespaces: the kernel reports pids in the initial pid namespace and
// silently ignores LISTEN from other namespaces.
func Open() (*Conn, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.NETLINK_CONNECTOR)
	if err != nil {
		return nil, wrapErr("socket", err)
	}
	c := &Conn{fd: fd, buf: make([]byte, recvBufLen)}
	if err := c.setup(); err != nil {
		_ = unix.Close(fd)
		return nil, err
	}
	return c, nil
}

func (c *Conn) setup() error {
	// Port id 0 lets the kernel pick a unique one, so several Conns can
	// coexist in one process (binding to getpid() would give EADDRINUSE).
	// The connector's multicast group for proc events is CN_IDX_PROC;
	// joining it is the step that needs CAP_NET_ADMIN on kernels whose
	// connector socket lacks NL_CFG_F_NONROOT_RECV.
	if err := unix.Bind(c.fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: cnIdxProc}); err != nil {
		return wrapErr("bind", err)
	}
	// SO_RCVBUFFORCE ignores net.core.rmem_max but needs CAP_NET_ADMIN;
	// SO_RCVBUF is silently capped at rmem_max.
	if err := unix.SetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rcvBufSize); err != nil {
		if err := unix.SetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_RCVBUF, rcvBufSize); err != nil {
			return wrapErr("setsockopt SO_RCVBUF", err)
		}
	}
	if err := c.send(procCnMcastListen); err != nil {
		return wrapErr("send PROC_CN_MCAST_LISTEN", err)
	}
	return nil
}

// send sends a PROC_CN_MCAST_* op to the kernel's connector.
func (c *Conn) send(op uint32) error {
	// Destination port 0 is the kernel. Groups must stay 0: with a group
	// set, netlink_sendmsg would also multicast our control message to
	// every other proc-event listener.
	dst := &unix.SockaddrNetlink{Family: unix.AF_NETLINK}
	for {
		err := unix.Sendto(c.fd, controlMsg(op), 0, dst)
		if err != unix.EINTR {
			return err
		}
	}
}

// controlMsg builds nlmsghdr + cn_msg + a 4-byte op. A 4-byte payload (rather
// than the newer struct proc_input with an event filter) subscribes to all
// events on every kernel version.
func controlMsg(op uint32) []byte {
	const total = nlmsgHdrLen + cnMsgHdrLen + 4
	b := make([]byte, total)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:4], total)
	// drivers/connector ignores the type, but NLMSG_DONE is what the
	// kernel and its sample userspace use.
	ne.PutUint16(b[4:6], unix.NLMSG_DONE)
	cn := b[nlmsgHdrLen:]
	ne.PutUint32(cn[0:4], cnIdxProc)
	ne.PutUint32(cn[4:8], cnValProc)
	ne.PutUint16(cn[cnMsgLenOff:cnMsgLenOff+2], 4)
	ne.PutUint32(cn[cnMsgHdrLen:cnMsgHdrLen+4], op)
	return b
}

// Drain reads every datagram already queued on the socket without blocking,
// calls fn (if non-nil) for each event in kernel order and returns how many
// events it passed. It stops when the socket has nothing left (EAGAIN).
//
// When the receive buffer overflowed, the kernel dropped events and reports
// that once as ENOBUFS; Drain counts it in Lost and keeps reading, since the
// events after the gap are still valid. A datagram that fails to parse stops
// Drain with an error; it has been consumed, so the next Drain continues
// after it. fn must not call Drain, Wait or Close.
func (c *Conn) Drain(fn func(Event)) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 {
		return 0, fmt.Errorf("proc connector: drain: %w", os.ErrClosed)
	}
	n := 0
	count := func(e Event) {
		n++
		if fn != nil {
			fn(e)
		}
	}
	for {
		nr, _, flags, from, err := unix.Recvmsg(c.fd, c.buf, nil, 0)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return n, nil
		case err == unix.ENOBUFS:
			c.lost.Add(1)
			continue
		case err != nil:
			return n, fmt.Errorf("proc connector: recvmsg: %w", err)
		}
		if flags&unix.MSG_TRUNC != 0 {
			return n, fmt.Errorf("proc connector: datagram larger than %d-byte buffer was truncated", len(c.buf))
		}
		// Only the kernel (port id 0) sends proc events; a privileged
		// process could multicast to our group too, and its datagrams
		// would be neither trustworthy nor necessarily well formed.
		if sa, ok := from.(*unix.SockaddrNetlink); !ok || sa.Pid != 0 {
			continue
		}
		if err := Parse(c.buf[:nr], count); err != nil {
			return n, err
		}
	}
}

// Wait blocks until the socket is readable or timeout passes, and reports
// whether it is readable. A negative timeout waits forever. An overflow
// (POLLERR) counts as readable so that Drain collects it.
func (c *Conn) Wait(timeout time.Duration) (bool, error) {
	c.mu.Lock()
	fd := c.fd
	c.mu.Unlock()
	if fd < 0 {
		return false, fmt.Errorf("proc connector: wait: %w", os.ErrClosed)
	}
	deadline := time.Now().Add(timeout)
	for {
		ms := -1
		if timeout >= 0 {
			left := max(time.Until(deadline), 0)
			// Round up: truncating would turn a sub-millisecond wait
			// into a busy loop of zero-timeout polls.
			ms = int(min((left+time.Millisecond-1)/time.Millisecond, math.MaxInt32))
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, ms)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("proc connector: poll: %w", err)
		}
		if n == 0 {
			return false, nil
		}
		if fds[0].Revents&unix.POLLNVAL != 0 {
			return false, fmt.Errorf("proc connector: poll: %w", os.ErrClosed)
		}
		return fds[0].Revents&(unix.POLLIN|unix.POLLERR) != 0, nil
	}
}

// Lost returns how many times the kernel reported dropped events (ENOBUFS).
// Each occurrence may stand for any number of lost events.
func (c *Conn) Lost() uint64 { return c.lost.Load() }

// Close unsubscribes and closes the socket. It is safe to call more than
// once. The IGNORE is best effort but worth sending: the kernel keeps a
// host-wide listener count (incremented by LISTEN, decremented by IGNORE)
// that decides whether it builds proc events at all.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 {
		return nil
	}
	_ = c.send(procCnMcastIgnore)
	err := unix.Close(c.fd)
	c.fd = -1
	if err != nil {
		return fmt.Errorf("proc connector: close: %w", err)
	}
	return nil
}

// wrapErr names the failed step and explains EPERM, which is what an
// unprivileged caller gets from bind.
func wrapErr(step string, err error) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return fmt.Errorf("proc connector: %s: %w (needs root or CAP_NET_ADMIN in the initial user namespace)", step, err)
	}
	return fmt.Errorf("proc connector: %s: %w", step, err)
}
