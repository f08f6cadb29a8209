package exporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resctrl-mon/resctrl-mon/lib/cgroup"
	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/permission"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// NodeOptions say how a node's exporter serves and what it adds to the counters.
type NodeOptions struct {
	ServeOptions
	// PressureAverages adds the kernel's 10/60/300 s PSI averages.
	PressureAverages bool
	// Collectors are served beside the node's (the NRI adapter's own, when it runs the
	// exporter in its process).
	Collectors []prometheus.Collector
	// Mount is the resctrl mount check the front end chose
	// (resctrlfs.MountFor(cfg.ResctrlSimulator)): the inventory opens resctrl with it, and
	// /healthz says what it refuses. Nil is resctrlfs.Check.
	Mount resctrlfs.Mount
}

// Node is the exporter of one node, as `resctrl-mon serve` and the NRI adapter (given a
// listen address) run it: the inventory of the configuration's resctrl root and state dir,
// opened at the first scrape that can, the Go and process metrics, and /healthz saying
// whether resctrl and the state dir are there and whether the kernel refused a write to
// them lately, with the likely cause (lib/permission).
type Node struct {
	l   net.Listener
	reg *prometheus.Registry
	o   ServeOptions
}

// NewNode binds the address and checks the web configuration first, so a bad flag or file
// refuses to start, with the reason, before anything is served.
func NewNode(cfg config.Config, o NodeOptions) (*Node, error) {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l, err := Listen(o.ServeOptions)
	if err != nil {
		return nil, err
	}
	mount := o.Mount
	if mount == nil {
		mount = resctrlfs.Check
	}
	// At boot resctrl may not be mounted yet, nor the state dir made by a first hook;
	// /healthz says so meanwhile.
	src := NewLazy(cfg, mount)
	if _, err := src.Open(); err != nil {
		log.Warn("no inventory yet; serving health only until there is", "err", err)
	}
	col, err := New(src, Options{SnapshotDir: cfg.SnapshotDir, PSI: &cgroup.Host{}, PSIAverages: o.PressureAverages, Log: log})
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	reg, err := Registry(append([]prometheus.Collector{col}, o.Collectors...)...)
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	so := o.ServeOptions
	so.Log = log
	extra := o.Healthy
	h := &healthLog{log: log}
	so.Healthy = func() error {
		err := func() error {
			if _, err := src.Open(); err != nil {
				return err
			}
			self := permission.Self()
			err := errors.Join(permission.Explain(mount(cfg.ResctrlRoot), self),
				permission.Explain(dirReadable(cfg.StateDir), self), recentRefusals(cfg.StateDir, time.Now()))
			if extra != nil {
				err = errors.Join(err, extra())
			}
			return err
		}()
		h.saw(err)
		return err
	}
	if ready := o.Readiness; ready != nil {
		so.Readiness = func() error { return errors.Join(so.Healthy(), ready()) }
	}
	_ = so.Healthy() // says at start why it is not healthy, if it is not
	return &Node{l: l, reg: reg, o: so}, nil
}

// healthLog logs each change of health once: a probe every few seconds must not flood the
// log, and a 503 nobody reads the body of must still leave a line saying why.
type healthLog struct {
	log  *slog.Logger
	mu   sync.Mutex
	last string // the last reason; "" when healthy
	seen bool
}

func (h *healthLog) saw(err error) {
	why := ""
	if err != nil {
		why = err.Error()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen && why == h.last {
		return
	}
	wasBad := h.last != ""
	h.seen, h.last = true, why
	switch {
	case err != nil:
		h.log.Warn("unhealthy: /healthz answers 503", "err", err)
	case wasBad:
		h.log.Info("healthy again: /healthz answers 200")
	}
}

// Addr is the address the node listens on.
func (n *Node) Addr() net.Addr { return n.l.Addr() }

// Serve serves until ctx ends, then shuts down cleanly; it closes the listener.
func (n *Node) Serve(ctx context.Context) error {
	defer func() { _ = n.l.Close() }()
	return Serve(ctx, n.l, n.reg, n.o)
}

// dirReadable reads the state dir as the inventory will: a stat succeeds for a user that
// may not list the directory (root's, 0700), and the inventory then reads nothing.
func dirReadable(dir string) error {
	f, err := os.Open(dir)
	if err == nil {
		_, err = f.Readdirnames(1)
		_ = f.Close()
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("state dir %s cannot be read: %w", dir, err)
	}
	return nil
}
