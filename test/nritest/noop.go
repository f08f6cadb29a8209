// Package nritest holds the no-op NRI plugin that the adapter's benchmarks measure against:
// in-process (nri-adapter/nriplugin) and as a binary beside a real containerd (test/e2e/noopnri).
package nritest

import (
	"context"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"
)

// Noop subscribes to the adapter's events and does nothing with them: what any plugin costs
// a runtime (a connection, a round trip per subscribed event) before it does anything.
// OnSync, if set, is called when the runtime has synchronised it.
type Noop struct{ OnSync func() }

var (
	_ stub.SynchronizeInterface        = Noop{}
	_ stub.StartContainerInterface     = Noop{}
	_ stub.PostStartContainerInterface = Noop{}
	_ stub.StopContainerInterface      = Noop{}
	_ stub.RemoveContainerInterface    = Noop{}
	_ stub.RemovePodInterface          = Noop{}
)

func (n Noop) Synchronize(context.Context, []*api.PodSandbox, []*api.Container) ([]*api.ContainerUpdate, error) {
	if n.OnSync != nil {
		n.OnSync()
	}
	return nil, nil
}
func (Noop) StartContainer(context.Context, *api.PodSandbox, *api.Container) error     { return nil }
func (Noop) PostStartContainer(context.Context, *api.PodSandbox, *api.Container) error { return nil }
func (Noop) StopContainer(context.Context, *api.PodSandbox, *api.Container) ([]*api.ContainerUpdate, error) {
	return nil, nil
}
func (Noop) RemoveContainer(context.Context, *api.PodSandbox, *api.Container) error { return nil }
func (Noop) RemovePodSandbox(context.Context, *api.PodSandbox) error                { return nil }
