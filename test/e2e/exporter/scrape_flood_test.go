package exporter_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/e2e"
	"github.com/resctrl-mon/resctrl-mon/test/resctrlsim"
)

// TestScrapeFloodLeavesPlacement: `resctrl-mon serve` runs as its own process beside the
// NRI adapter of a real containerd (as the chart runs it in mode nri: another container),
// flooded with 80 stalled /metrics requests (40 that never read their answer, 40 that never
// finish their headers, each re-sent as soon as the server drops it) while 20 pods start
// through crictl. Every pod is placed (its group there, its tasks in it, nothing failed or
// over the NRI budget), /healthz answers a fresh client within 1 s after each pod, serve's
// memory stays bounded, and the server closes every stalled connection itself.
func TestScrapeFloodLeavesPlacement(t *testing.T) {
	t.Parallel()
	e := e2e.NewHookEnv(t, resctrlsim.Options{}, "retention: 1h\n")
	ctrd := e2e.StartContainerd(t, e2e.ContainerdOptions{Rootfs: e.Rootfs})
	e2e.StartAdapter(t, e, ctrd.NRISocket)
	s := startServe(t, e.CfgPath)
	rss0 := vmRSS(t, s.Cmd.Process.Pid)

	f := startFlood(t, s.Addr, 40, 40)
	const pods = 20
	var peak int64
	for i := range pods {
		uid := fmt.Sprintf("f1000000-0000-4000-8000-%012d", i)
		start := time.Now()
		pod, err := ctrd.RunPod(e2e.PodSpec{Name: fmt.Sprint("flooded-", i), Namespace: "e2e", UID: uid, Kubelet: true})
		if err != nil {
			t.Fatalf("pod %d: %v\nthe adapter said:\n%s", i, err, e.Log())
		}
		id, err := ctrd.RunContainer(pod, e2e.TestImage, e2e.ContainerSpec{Name: "app", Command: []string{"sleep", "600"}})
		if err != nil {
			t.Fatalf("pod %d's container: %v\nthe adapter said:\n%s", i, err, e.Log())
		}
		took := time.Since(start)
		group := "mon_groups/" + uid
		if !e.Exists(group) {
			t.Errorf("pod %d: no group %s", i, group)
		} else if placed, tids := e.CRIPlaced(ctrd.CRI, id, group); placed != len(tids) {
			t.Errorf("pod %d: %d of its %d tasks in %s", i, placed, len(tids), group)
		}
		hs := time.Now()
		if err := freshHealthz(s.Addr); err != nil {
			t.Errorf("after pod %d: /healthz of a fresh client: %v (after %v)", i, err, time.Since(hs))
		}
		peak = max(peak, vmRSS(t, s.Cmd.Process.Pid))
		t.Logf("pod %d started in %v; /healthz in %v", i, took.Round(time.Millisecond), time.Since(hs).Round(time.Microsecond))
	}
	got := f.stop(t)
	t.Logf("flood: %d stalled connections opened, every one closed by the server (slowest after %v); serve's RSS %d MiB, at most %d MiB",
		got.opened, got.slowest.Round(time.Millisecond), rss0>>20, peak>>20)
	if got.opened < 80 {
		t.Errorf("only %d flood connections", got.opened)
	}
	// A few MiB per scrape in flight and per 64 connections, whatever the clients do.
	if grew := peak - rss0; grew > 64<<20 {
		t.Errorf("serve's RSS grew %d MiB during the flood", grew>>20)
	}

	st := e.Status()
	if len(st.Failures) != 0 {
		t.Errorf("failures recorded during the flood: %v %+v", st.Failures, st.Recent)
	}
	if n := st.Counts["adapter.created"]; n != pods {
		t.Errorf("adapter.created %d, want %d", n, pods)
	}
	if strings.Contains(e.Log(), "time budget exhausted") {
		t.Errorf("the adapter ran out of its NRI budget:\n%s", e.Log())
	}
}

// freshHealthz asks /healthz on a connection of its own, giving it 1 s.
func freshHealthz(addr string) error {
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get("http://" + addr + "/healthz")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%d %s", resp.StatusCode, b)
	}
	return nil
}

// vmRSS is a process's resident memory, in bytes.
func vmRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// flood keeps stalled clients on a server: readers send a whole GET /metrics and never
// read (until the end); half-sent clients never finish their headers and are re-sent as
// soon as the server drops them.
type flood struct {
	addr    string
	done    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	readers []net.Conn
	opened  int
	slowest time.Duration
	errs    []error
}

type floodResult struct {
	opened  int
	slowest time.Duration
}

func startFlood(t *testing.T, addr string, readers, half int) *flood {
	t.Helper()
	f := &flood{addr: addr, done: make(chan struct{})}
	for range readers {
		c, err := f.dial("GET /metrics HTTP/1.1\r\nHost: flood\r\n\r\n")
		if err != nil {
			t.Fatal(err)
		}
		f.readers = append(f.readers, c)
	}
	for range half {
		f.wg.Add(1)
		go f.halfSent()
	}
	return f
}

func (f *flood) dial(req string) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", f.addr, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("flood: dial: %w", err)
	}
	if _, err := io.WriteString(c, req); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("flood: send: %w", err)
	}
	f.mu.Lock()
	f.opened++
	f.mu.Unlock()
	return c, nil
}

// halfSent sends half a request and waits for the server to drop it, again and again.
func (f *flood) halfSent() {
	defer f.wg.Done()
	for {
		select {
		case <-f.done:
			return
		default:
		}
		c, err := f.dial("GET /metrics HTTP/1.1\r\nHost: flood\r\n")
		if err != nil {
			f.fail(err)
			return
		}
		if err := f.awaitClose(c, time.Now()); err != nil {
			f.fail(err)
			return
		}
	}
}

// awaitClose reads c until the server closes it (EOF or a reset), 60 s at most: the
// default timeouts are 5 s for headers and 30 s idle.
func (f *flood) awaitClose(c net.Conn, since time.Time) error {
	defer func() { _ = c.Close() }()
	_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
	_, err := io.Copy(io.Discard, bufio.NewReader(c))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("flood: a stalled connection still open after 60s")
	}
	f.mu.Lock()
	f.slowest = max(f.slowest, time.Since(since))
	f.mu.Unlock()
	return nil
}

func (f *flood) fail(err error) {
	f.mu.Lock()
	f.errs = append(f.errs, err)
	f.mu.Unlock()
}

// stop ends the flood and waits for the server to close every stalled connection.
func (f *flood) stop(t *testing.T) floodResult {
	t.Helper()
	close(f.done)
	start := time.Now()
	var wg sync.WaitGroup
	for _, c := range f.readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f.awaitClose(c, start); err != nil {
				f.fail(err)
			}
		}()
	}
	wg.Wait()
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, err := range slices.Compact(f.errs) {
		t.Error(err)
	}
	return floodResult{opened: f.opened, slowest: f.slowest}
}
