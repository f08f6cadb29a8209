package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/resctrl-mon/resctrl-mon/lib/config"
	"github.com/resctrl-mon/resctrl-mon/lib/psi"
	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// NodeOptions say how a node's exporter serves and what it adds to the counters.
type NodeOptions struct {
	ServeOptions
	// PressureAverages adds the kernel's 10/60/300 s PSI averages.
	PressureAverages bool
}

// Node is the exporter of one node, as `resctrl-mon serve` and the NRI adapter (given a
// listen address) run it: the inventory of the configuration's resctrl root and state dir,
// opened at the first scrape that can, the Go and process metrics, and /healthz saying
// whether resctrl and the state dir are there.
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
	// At boot resctrl may not be mounted yet, nor the state dir made by a first hook;
	// /healthz says so meanwhile.
	src := NewLazy(cfg)
	if _, err := src.Open(); err != nil {
		log.Warn("no inventory yet; serving health only until there is", "err", err)
	}
	col, err := New(src, Options{SnapshotDir: cfg.SnapshotDir, PSI: &psi.Host{}, PSIAverages: o.PressureAverages, Log: log})
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(col, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	so := o.ServeOptions
	so.Log = log
	extra := o.Healthy
	so.Healthy = func() error {
		if _, err := src.Open(); err != nil {
			return err
		}
		err := errors.Join(resctrlfs.Check(cfg.ResctrlRoot), dirExists(cfg.StateDir))
		if extra != nil {
			err = errors.Join(err, extra())
		}
		return err
	}
	return &Node{l: l, reg: reg, o: so}, nil
}

// Addr is the address the node listens on.
func (n *Node) Addr() net.Addr { return n.l.Addr() }

// Serve serves until ctx ends, then shuts down cleanly; it closes the listener.
func (n *Node) Serve(ctx context.Context) error {
	defer func() { _ = n.l.Close() }()
	return Serve(ctx, n.l, n.reg, n.o)
}

func dirExists(dir string) error {
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	return nil
}
