package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// RDTPluginIndex orders the test's RDT plugin before the adapter (nriplugin.DefaultIndex,
// 90): the runtime calls plugins by index, so the spec has its linux.intelRdt before any
// other plugin sees the container.
const RDTPluginIndex = "05"

// rdtPlugin asks, at CreateContainer, what an operator's RDT plugin would ask of every
// container: linux.intelRdt with enableMonitoring (any NRI plugin may since NRI v0.11:
// ContainerAdjustment's Linux.Rdt), in closID's class ("" leaves the closID unset), and the
// createRuntime hooks given (AddHooks), first in the spec's.
type rdtPlugin struct {
	closID string
	hooks  []*api.Hook
	synced chan struct{}
}

func (p *rdtPlugin) Synchronize(context.Context, []*api.PodSandbox, []*api.Container) ([]*api.ContainerUpdate, error) {
	select {
	case <-p.synced:
	default:
		close(p.synced)
	}
	return nil, nil
}

func (p *rdtPlugin) CreateContainer(context.Context, *api.PodSandbox, *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	a := &api.ContainerAdjustment{}
	if p.closID != "" {
		a.SetLinuxRDTClosID(p.closID)
	}
	a.SetLinuxRDTEnableMonitoring(true)
	if len(p.hooks) > 0 {
		a.AddHooks(&api.Hooks{CreateRuntime: p.hooks})
	}
	return a, nil, nil
}

// StartRDTPlugin connects, in the test's process, an NRI plugin (index RDTPluginIndex) to
// the runtime's socket that sets linux.intelRdt.enableMonitoring, and closID when not empty,
// on every container, and adds createRuntime as its first createRuntime hooks; it returns
// once the runtime has synchronised it, so that every container created after has them.
// It is stopped when the test ends.
func StartRDTPlugin(t testing.TB, socket, closID string, createRuntime ...specs.Hook) {
	t.Helper()
	p := &rdtPlugin{closID: closID, synced: make(chan struct{})}
	for _, h := range createRuntime {
		ah := &api.Hook{Path: h.Path, Args: h.Args, Env: h.Env}
		if h.Timeout != nil {
			ah.Timeout = api.Int(*h.Timeout)
		}
		p.hooks = append(p.hooks, ah)
	}
	s, err := stub.New(p, stub.WithPluginName("rdt-test"), stub.WithPluginIdx(RDTPluginIndex), stub.WithSocketPath(socket),
		stub.WithLogger(quietLogger{}))
	if err != nil {
		t.Fatalf("e2e: rdt plugin: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		cancel()
		t.Fatalf("e2e: rdt plugin: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		s.Stop()
	})
	select {
	case <-p.synced:
	case <-time.After(20 * time.Second):
		t.Fatalf("e2e: rdt plugin: the runtime did not synchronise it")
	}
}

// quietLogger drops the stub's chatter (each step of its registration) and says its
// warnings and errors on stderr: not through t.Logf, which panics when the stub's goroutines
// log after the test has ended.
type quietLogger struct{}

func (quietLogger) Debugf(context.Context, string, ...any) {}
func (quietLogger) Infof(context.Context, string, ...any)  {}
func (quietLogger) Warnf(_ context.Context, f string, a ...any) {
	fmt.Fprintf(os.Stderr, "rdt plugin: warning: "+f+"\n", a...)
}
func (quietLogger) Errorf(_ context.Context, f string, a ...any) {
	fmt.Fprintf(os.Stderr, "rdt plugin: error: "+f+"\n", a...)
}
