// Package procevents subscribes to the Linux process events connector
// (NETLINK_CONNECTOR, CN_IDX_PROC) and decodes its fork, exec and exit
// events, in the order the kernel queued them on the socket.
//
// The resctrl simulator needs this because the kernel puts every new task in
// its creator's resctrl group at clone time; to mirror that, the simulator must
// see every fork and thread creation on the host, not just those of processes
// it started itself.
package procevents

import (
	"encoding/binary"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// Connector identifiers, from include/uapi/linux/connector.h (x/sys/unix does
// not define them).
const (
	cnIdxProc = 0x1 // CN_IDX_PROC: also the netlink multicast group to bind to
	cnValProc = 0x1 // CN_VAL_PROC
)

// Subscription ops, from enum proc_cn_mcast_op in include/uapi/linux/cn_proc.h.
const (
	procCnMcastListen = 1 // PROC_CN_MCAST_LISTEN
	procCnMcastIgnore = 2 // PROC_CN_MCAST_IGNORE
)

// Values of proc_event.what, from enum proc_cn_event (older headers: enum
// what) in include/uapi/linux/cn_proc.h.
const (
	procEventNone        = 0x00000000 // PROC_EVENT_NONE: the ack to LISTEN/IGNORE
	procEventFork        = 0x00000001 // PROC_EVENT_FORK
	procEventExec        = 0x00000002 // PROC_EVENT_EXEC
	procEventUID         = 0x00000004 // PROC_EVENT_UID
	procEventGID         = 0x00000040 // PROC_EVENT_GID
	procEventSID         = 0x00000080 // PROC_EVENT_SID
	procEventPtrace      = 0x00000100 // PROC_EVENT_PTRACE
	procEventComm        = 0x00000200 // PROC_EVENT_COMM
	procEventNonzeroExit = 0x20000000 // PROC_EVENT_NONZERO_EXIT: a subscription filter bit only, never sent as what
	procEventCoredump    = 0x40000000 // PROC_EVENT_COREDUMP
	procEventExit        = 0x80000000 // PROC_EVENT_EXIT
)

// Layout sizes and offsets (all fields are host byte order; the connector does
// no byte swapping).
const (
	// struct nlmsghdr { u32 len; u16 type; u16 flags; u32 seq; u32 pid; }
	nlmsgHdrLen = unix.SizeofNlMsghdr // 16
	nlmsgAlign  = unix.NLMSG_ALIGNTO  // 4

	// struct cn_msg { struct cb_id { u32 idx; u32 val; } id; u32 seq; u32 ack;
	// u16 len; u16 flags; u8 data[]; } (include/uapi/linux/connector.h)
	cnMsgHdrLen = 20
	cnMsgLenOff = 16

	// struct proc_event { u32 what; u32 cpu; u64 timestamp_ns (aligned 8);
	// union event_data; } (include/uapi/linux/cn_proc.h): the union starts at 16.
	procEventHdrLen = 16

	// fork_proc_event { parent_pid, parent_tgid, child_pid, child_tgid }, each
	// __kernel_pid_t (int32).
	forkDataLen = 16
	// exec_proc_event { process_pid, process_tgid }; exit_proc_event starts
	// the same way and then has exit_code, exit_signal and (since 6.x)
	// parent_pid, parent_tgid, which we do not need, so older kernels' shorter
	// exit events still parse.
	pidPairLen = 8
)

// Kind is the type of a process event.
type Kind uint32

// Event kinds. Other covers everything callers do not need (the subscription
// ack, uid/gid/sid/ptrace/comm/coredump changes); its Event has no pids set.
const (
	Other Kind = iota
	Fork
	Exec
	Exit
)

// String returns a short name for k.
func (k Kind) String() string {
	switch k {
	case Other:
		return "other"
	case Fork:
		return "fork"
	case Exec:
		return "exec"
	case Exit:
		return "exit"
	}
	return fmt.Sprintf("Kind(%d)", uint32(k))
}

// Event is one decoded process event. Pids are kernel-global (init pid
// namespace): the kernel only serves listeners in the initial namespaces.
type Event struct {
	Kind Kind
	// Fork: Pid/Tgid are the new task (Pid != Tgid for a new thread), and
	// ParentPid/ParentTgid are the new task's real_parent. The kernel
	// (kernel/fork.c copy_process) sets real_parent to the creating thread
	// only for a plain fork; for CLONE_THREAD and CLONE_PARENT it is the
	// creator's own real_parent. So for a new thread ParentTgid is the
	// parent *process* of the thread group, not the group itself, and the
	// creator of a thread is only known to be "some thread of Tgid". Callers
	// that need the creator must therefore use Tgid for threads and
	// ParentPid/ParentTgid for processes.
	//
	// Exec and Exit: Pid/Tgid are the task; ParentPid/ParentTgid are 0. Exit
	// is reported once per exiting thread.
	Pid, Tgid, ParentPid, ParentTgid int
}

// Parse decodes one datagram read from a proc connector socket, which holds
// one or more netlink messages, and calls fn for every proc_event in order.
//
// Messages whose cn_msg id is not {CN_IDX_PROC, CN_VAL_PROC} are skipped
// without calling fn: they belong to another connector user and are not
// malformed, so they are no reason to fail. NLMSG_NOOP is skipped. Every
// length is checked against the bytes present; a malformed message stops
// Parse with an error naming the problem (events before it have already been
// passed to fn). Parse never panics.
func Parse(b []byte, fn func(Event)) error {
	for off := 0; off < len(b); {
		rest := b[off:]
		if len(rest) < nlmsgHdrLen {
			return fmt.Errorf("proc event: %d trailing bytes at offset %d, shorter than nlmsghdr (%d)", len(rest), off, nlmsgHdrLen)
		}
		msgLen := binary.NativeEndian.Uint32(rest[0:4])
		typ := binary.NativeEndian.Uint16(rest[4:6])
		if msgLen < nlmsgHdrLen {
			return fmt.Errorf("proc event: nlmsg_len %d at offset %d is shorter than nlmsghdr (%d)", msgLen, off, nlmsgHdrLen)
		}
		if uint64(msgLen) > uint64(len(rest)) {
			return fmt.Errorf("proc event: nlmsg_len %d at offset %d exceeds remaining datagram %d", msgLen, off, len(rest))
		}
		if err := parseNlmsg(typ, rest[nlmsgHdrLen:msgLen], fn); err != nil {
			return err
		}
		// Messages in one datagram start at NLMSG_ALIGN boundaries; the last
		// one need not be padded, hence the clamp.
		next := (int(msgLen) + nlmsgAlign - 1) &^ (nlmsgAlign - 1)
		off += min(next, len(rest))
	}
	return nil
}

// parseNlmsg handles the payload of one netlink message of type typ.
func parseNlmsg(typ uint16, payload []byte, fn func(Event)) error {
	switch typ {
	case unix.NLMSG_NOOP:
		return nil
	case unix.NLMSG_ERROR:
		// struct nlmsgerr { int error; struct nlmsghdr msg; }: error 0 is
		// an ack, otherwise a negative errno.
		if len(payload) < 4 {
			return fmt.Errorf("proc event: NLMSG_ERROR payload %d bytes, need 4", len(payload))
		}
		if code := int32(binary.NativeEndian.Uint32(payload[0:4])); code != 0 {
			return fmt.Errorf("proc event: netlink error: %w", syscall.Errno(-int64(code)))
		}
		return nil
	case unix.NLMSG_OVERRUN:
		return fmt.Errorf("proc event: netlink overrun: %w", unix.ENOBUFS)
	case unix.NLMSG_DONE:
		// The connector (drivers/connector/connector.c) sends every
		// message with type NLMSG_DONE; here it carries a cn_msg and is
		// not the end of a multipart dump, so we keep walking after it.
		return parseCnMsg(payload, fn)
	}
	return fmt.Errorf("proc event: unexpected nlmsg_type %d", typ)
}

// parseCnMsg decodes a struct cn_msg and the proc_event it carries.
func parseCnMsg(p []byte, fn func(Event)) error {
	if len(p) < cnMsgHdrLen {
		return fmt.Errorf("proc event: payload %d bytes, shorter than cn_msg header (%d)", len(p), cnMsgHdrLen)
	}
	idx := binary.NativeEndian.Uint32(p[0:4])
	val := binary.NativeEndian.Uint32(p[4:8])
	dataLen := int(binary.NativeEndian.Uint16(p[cnMsgLenOff : cnMsgLenOff+2]))
	if avail := len(p) - cnMsgHdrLen; dataLen > avail {
		return fmt.Errorf("proc event: cn_msg length %d exceeds payload %d", dataLen, avail)
	}
	if idx != cnIdxProc || val != cnValProc {
		return nil
	}
	return parseProcEvent(p[cnMsgHdrLen:cnMsgHdrLen+dataLen], fn)
}

// parseProcEvent decodes a struct proc_event of len(d) bytes.
func parseProcEvent(d []byte, fn func(Event)) error {
	if len(d) < procEventHdrLen {
		return fmt.Errorf("proc event: cn_msg data %d bytes, shorter than proc_event header (%d)", len(d), procEventHdrLen)
	}
	what := binary.NativeEndian.Uint32(d[0:4])
	u := d[procEventHdrLen:]
	pid := func(i int) int { return int(int32(binary.NativeEndian.Uint32(u[4*i : 4*i+4]))) }
	switch what {
	case procEventFork:
		if len(u) < forkDataLen {
			return fmt.Errorf("proc event: fork event data %d bytes, need %d", len(u), forkDataLen)
		}
		fn(Event{Kind: Fork, ParentPid: pid(0), ParentTgid: pid(1), Pid: pid(2), Tgid: pid(3)})
	case procEventExec, procEventExit:
		if len(u) < pidPairLen {
			return fmt.Errorf("proc event: %s event data %d bytes, need %d", kindOf(what), len(u), pidPairLen)
		}
		fn(Event{Kind: kindOf(what), Pid: pid(0), Tgid: pid(1)})
	default:
		// PROC_EVENT_NONE (the ack, also multicast for other listeners'
		// LISTEN/IGNORE), UID, GID, SID, PTRACE, COMM, COREDUMP and
		// anything newer.
		fn(Event{Kind: Other})
	}
	return nil
}

func kindOf(what uint32) Kind {
	switch what {
	case procEventFork:
		return Fork
	case procEventExec:
		return Exec
	case procEventExit:
		return Exit
	}
	return Other
}
