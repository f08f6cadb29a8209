package procevents

import (
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// procEvent builds a struct proc_event as the 6.x kernel sends it: a 16-byte
// header and a 24-byte union whose leading int32 fields are given.
func procEvent(what uint32, fields ...int32) []byte {
	b := make([]byte, procEventHdrLen+24)
	binary.NativeEndian.PutUint32(b[0:4], what)
	binary.NativeEndian.PutUint32(b[4:8], 3)          // cpu
	binary.NativeEndian.PutUint64(b[8:16], 123456789) // timestamp_ns
	for i, f := range fields {
		binary.NativeEndian.PutUint32(b[procEventHdrLen+4*i:], uint32(f))
	}
	return b
}

// cnMsg wraps data in a struct cn_msg with the given id.
func cnMsg(idx, val uint32, data []byte) []byte {
	b := make([]byte, cnMsgHdrLen, cnMsgHdrLen+len(data))
	binary.NativeEndian.PutUint32(b[0:4], idx)
	binary.NativeEndian.PutUint32(b[4:8], val)
	binary.NativeEndian.PutUint32(b[8:12], 7) // seq
	binary.NativeEndian.PutUint16(b[cnMsgLenOff:], uint16(len(data)))
	return append(b, data...)
}

// procCn wraps a proc_event in a cn_msg with the proc connector's id.
func procCn(ev []byte) []byte { return cnMsg(cnIdxProc, cnValProc, ev) }

// nlmsg wraps payload in a struct nlmsghdr, unpadded.
func nlmsg(typ uint16, payload []byte) []byte {
	b := make([]byte, nlmsgHdrLen, nlmsgHdrLen+len(payload))
	binary.NativeEndian.PutUint32(b[0:4], uint32(nlmsgHdrLen+len(payload)))
	binary.NativeEndian.PutUint16(b[4:6], typ)
	return append(b, payload...)
}

// done is a connector message as the kernel sends it: type NLMSG_DONE.
func done(cn []byte) []byte { return nlmsg(nlmsgDone, cn) }

// datagram concatenates messages, padding each but the last to NLMSG_ALIGN.
func datagram(msgs ...[]byte) []byte {
	var b []byte
	for i, m := range msgs {
		b = append(b, m...)
		if i < len(msgs)-1 {
			for len(b)%nlmsgAlign != 0 {
				b = append(b, 0)
			}
		}
	}
	return b
}

const (
	nlmsgNoop    = 1 // NLMSG_NOOP
	nlmsgError   = 2 // NLMSG_ERROR
	nlmsgDone    = 3 // NLMSG_DONE
	nlmsgOverrun = 4 // NLMSG_OVERRUN
)

var (
	forkMsg   = done(procCn(procEvent(procEventFork, 100, 101, 200, 200)))
	threadMsg = done(procCn(procEvent(procEventFork, 1, 1, 205, 200)))
	execMsg   = done(procCn(procEvent(procEventExec, 300, 300)))
	// 6.x exit_proc_event: pid, tgid, exit_code, exit_signal, parent_pid, parent_tgid.
	exitMsg = done(procCn(procEvent(procEventExit, 301, 300, 256, 17, 100, 100)))
	ackMsg  = done(procCn(procEvent(procEventNone, 0)))
)

func collect(b []byte) ([]Event, error) {
	var got []Event
	err := Parse(b, func(e Event) { got = append(got, e) })
	return got, err
}

func TestParse(t *testing.T) {
	t.Parallel()
	// An exec event whose cn_msg data is 26 bytes: nlmsg_len 62 is not a
	// multiple of 4, so the next message starts after 2 padding bytes.
	oddExec := done(procCn(procEvent(procEventExec, 400, 400)[:26]))
	// Pre-6.x exit_proc_event had no parent fields: 32 bytes of data.
	oldExit := done(procCn(procEvent(procEventExit, 302, 302, 0, 17)[:32]))
	errMsg := nlmsgerr(syscall.EPERM)

	tests := []struct {
		name    string
		in      []byte
		want    []Event
		wantErr string // substring; "" means no error
	}{
		{name: "empty datagram", in: nil},
		{name: "fork", in: forkMsg, want: []Event{{Kind: Fork, ParentPid: 100, ParentTgid: 101, Pid: 200, Tgid: 200}}},
		{name: "thread fork", in: threadMsg, want: []Event{{Kind: Fork, ParentPid: 1, ParentTgid: 1, Pid: 205, Tgid: 200}}},
		{name: "exec", in: execMsg, want: []Event{{Kind: Exec, Pid: 300, Tgid: 300}}},
		{name: "exit", in: exitMsg, want: []Event{{Kind: Exit, Pid: 301, Tgid: 300}}},
		{name: "exit without parent fields", in: oldExit, want: []Event{{Kind: Exit, Pid: 302, Tgid: 302}}},
		{name: "ack is Other", in: ackMsg, want: []Event{{Kind: Other}}},
		{name: "uid change is Other", in: done(procCn(procEvent(procEventUID, 5, 5, 0, 0))), want: []Event{{Kind: Other}}},
		{name: "comm change is Other", in: done(procCn(procEvent(procEventComm, 5, 5))), want: []Event{{Kind: Other}}},
		{name: "unknown what is Other", in: done(procCn(procEvent(0x400, 5, 5))), want: []Event{{Kind: Other}}},
		{name: "negative pid kept signed", in: done(procCn(procEvent(procEventExec, -1, -1))), want: []Event{{Kind: Exec, Pid: -1, Tgid: -1}}},
		{
			name: "two messages in one datagram",
			in:   datagram(forkMsg, execMsg),
			want: []Event{
				{Kind: Fork, ParentPid: 100, ParentTgid: 101, Pid: 200, Tgid: 200},
				{Kind: Exec, Pid: 300, Tgid: 300},
			},
		},
		{
			name: "unaligned message padded to NLMSG_ALIGN",
			in:   datagram(oddExec, exitMsg, oddExec),
			want: []Event{
				{Kind: Exec, Pid: 400, Tgid: 400},
				{Kind: Exit, Pid: 301, Tgid: 300},
				{Kind: Exec, Pid: 400, Tgid: 400},
			},
		},
		{name: "trailing padding after last message", in: append(append([]byte{}, oddExec...), 0, 0), want: []Event{{Kind: Exec, Pid: 400, Tgid: 400}}},
		// A foreign connector id is another subsystem's well-formed
		// message: skipped, no event, no error.
		{name: "wrong cb_id idx ignored", in: done(cnMsg(2, cnValProc, procEvent(procEventFork, 1, 1, 2, 2)))},
		{name: "wrong cb_id val ignored", in: done(cnMsg(cnIdxProc, 2, procEvent(procEventFork, 1, 1, 2, 2)))},
		{name: "wrong cb_id then fork", in: datagram(done(cnMsg(9, 9, []byte{1, 2, 3})), execMsg), want: []Event{{Kind: Exec, Pid: 300, Tgid: 300}}},
		{name: "NLMSG_NOOP skipped", in: datagram(nlmsg(nlmsgNoop, nil), execMsg), want: []Event{{Kind: Exec, Pid: 300, Tgid: 300}}},
		{name: "NLMSG_ERROR 0 is an ack", in: nlmsg(nlmsgError, make([]byte, 20))},
		{name: "NLMSG_ERROR errno", in: nlmsg(nlmsgError, errMsg), wantErr: "netlink error: operation not permitted"},
		{name: "NLMSG_ERROR short", in: nlmsg(nlmsgError, []byte{1}), wantErr: "NLMSG_ERROR payload 1 bytes, need 4"},
		{name: "NLMSG_OVERRUN", in: nlmsg(nlmsgOverrun, nil), wantErr: "netlink overrun"},
		{name: "unknown nlmsg type", in: nlmsg(0x20, procCn(procEvent(procEventExec, 1, 1))), wantErr: "unexpected nlmsg_type 32"},
		{name: "nlmsg_len too small", in: []byte{4, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, wantErr: "nlmsg_len 4 at offset 0 is shorter than nlmsghdr"},
		{name: "nlmsg_len beyond datagram", in: forkMsg[:len(forkMsg)-1], wantErr: "nlmsg_len 76 at offset 0 exceeds remaining datagram 75"},
		{name: "short trailing bytes", in: datagram(execMsg, []byte{1, 2, 3}), want: []Event{{Kind: Exec, Pid: 300, Tgid: 300}}, wantErr: "3 trailing bytes at offset 76"},
		{name: "payload shorter than cn_msg", in: done(make([]byte, 12)), wantErr: "payload 12 bytes, shorter than cn_msg header"},
		{name: "cn_msg length exceeds payload", in: done(setCnLen(procCn(procEvent(procEventExec, 1, 1))[:28], 12)), wantErr: "proc event: cn_msg length 12 exceeds payload 8"},
		{name: "cn_msg data shorter than proc_event header", in: done(procCn(make([]byte, 15))), wantErr: "cn_msg data 15 bytes, shorter than proc_event header"},
		{name: "fork data short", in: done(procCn(procEvent(procEventFork, 1, 1, 2, 2)[:31])), wantErr: "fork event data 15 bytes, need 16"},
		{name: "exec data short", in: done(procCn(procEvent(procEventExec, 1, 1)[:23])), wantErr: "exec event data 7 bytes, need 8"},
		{name: "exit data short", in: done(procCn(procEvent(procEventExit, 1, 1)[:20])), wantErr: "exit event data 4 bytes, need 8"},
		{name: "error after good message keeps earlier events", in: datagram(execMsg, done(procCn(make([]byte, 3)))), want: []Event{{Kind: Exec, Pid: 300, Tgid: 300}}, wantErr: "shorter than proc_event header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := collect(tt.in)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Parse: unexpected error %v", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("Parse: no error, want %q", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("Parse error %q, want it to contain %q", err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("events = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// nlmsgerr builds the leading int of struct nlmsgerr: a negative errno.
func nlmsgerr(errno syscall.Errno) []byte {
	code := -int32(errno)
	b := make([]byte, 4)
	binary.NativeEndian.PutUint32(b, uint32(code))
	return b
}

func setCnLen(cn []byte, n uint16) []byte {
	binary.NativeEndian.PutUint16(cn[cnMsgLenOff:], n)
	return cn
}

func TestParseErrnoIsWrapped(t *testing.T) {
	t.Parallel()
	_, err := collect(nlmsg(nlmsgError, nlmsgerr(syscall.ENOENT)))
	if !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("error %v does not wrap ENOENT", err)
	}
}

// TestParseTruncated cuts each message kind at every byte length: the
// nlmsghdr then claims more than is present, so every cut must be an error
// (except the empty datagram, which is valid and empty).
func TestParseTruncated(t *testing.T) {
	t.Parallel()
	for name, msg := range map[string][]byte{"fork": forkMsg, "thread": threadMsg, "exec": execMsg, "exit": exitMsg, "ack": ackMsg} {
		for n := 1; n < len(msg); n++ {
			got, err := collect(msg[:n])
			if err == nil || len(got) != 0 {
				t.Errorf("%s cut to %d bytes: events %v, err %v; want error and no events", name, n, got, err)
			}
		}
	}
}

// TestParseShortInnerLengths keeps nlmsghdr and cn_msg lengths consistent
// but shrinks the data they describe, so the inner length checks are the
// ones that must catch it.
func TestParseShortInnerLengths(t *testing.T) {
	t.Parallel()
	full := procEvent(procEventFork, 1, 2, 3, 4)
	for n := 0; n <= len(full); n++ {
		got, err := collect(done(procCn(full[:n])))
		if wantOK := n >= procEventHdrLen+forkDataLen; wantOK != (err == nil) {
			t.Errorf("fork proc_event of %d bytes: err %v", n, err)
		}
		if err != nil && len(got) != 0 {
			t.Errorf("fork proc_event of %d bytes: events %v despite error", n, got)
		}
	}
	for n := 0; n < cnMsgHdrLen; n++ {
		if _, err := collect(done(procCn(nil)[:n])); err == nil {
			t.Errorf("cn_msg of %d bytes: no error", n)
		}
	}
}

func TestControlMsgParsesBack(t *testing.T) {
	t.Parallel()
	// The LISTEN message is itself a well-formed connector message whose
	// 4-byte payload is too short for a proc_event: checks its framing.
	b := controlMsg(procCnMcastListen)
	if len(b) != 40 || binary.NativeEndian.Uint32(b[0:4]) != 40 {
		t.Fatalf("control message length %d / nlmsg_len %d, want 40", len(b), binary.NativeEndian.Uint32(b[0:4]))
	}
	_, err := collect(b)
	if err == nil || !strings.Contains(err.Error(), "cn_msg data 4 bytes") {
		t.Fatalf("Parse(control msg) = %v, want a short proc_event error", err)
	}
	if op := binary.NativeEndian.Uint32(b[36:40]); op != procCnMcastListen {
		t.Fatalf("op = %d", op)
	}
}

func FuzzParse(f *testing.F) {
	for _, seed := range [][]byte{
		nil, forkMsg, threadMsg, execMsg, exitMsg, ackMsg,
		datagram(forkMsg, execMsg, exitMsg),
		datagram(done(procCn(procEvent(procEventExec, 1, 1)[:26])), ackMsg),
		done(cnMsg(2, 1, []byte{1})),
		nlmsg(nlmsgError, make([]byte, 4)),
		nlmsg(nlmsgNoop, nil),
		forkMsg[:40],
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n := 0
		err := Parse(b, func(e Event) {
			n++
			if e.Kind > Exit {
				t.Fatalf("event with invalid kind %d", e.Kind)
			}
			if e.Kind != Fork && (e.ParentPid != 0 || e.ParentTgid != 0) {
				t.Fatalf("%v event with parent fields: %+v", e.Kind, e)
			}
		})
		// Every event needs at least nlmsghdr + cn_msg + proc_event header.
		if max := len(b) / (nlmsgHdrLen + cnMsgHdrLen + procEventHdrLen); n > max {
			t.Fatalf("%d events from %d bytes (err %v)", n, len(b), err)
		}
	})
}
