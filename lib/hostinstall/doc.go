// Package hostinstall puts the OCI hook on a host and takes it off again: the hook binary,
// optionally its config, and the hooks.d registrations (lib/hooksd) that make CRI-O and
// podman run it. `resctrl-mon host install|uninstall` is its command line; the Helm chart's
// hooks mode runs it from the image with the host's root mounted at a prefix (HostRoot), and
// `make install` runs it with HostRoot=$(DESTDIR).
//
// Three facts shape it:
//   - A runtime drops a registration whose hook path does not exist when it loads hooks.d,
//     and execs the hook at every container start. So every file is written whole (a temp
//     file beside it, synced, renamed over), the binary before the registrations on install
//     and after them on uninstall: a runtime never sees a registration without its binary,
//     nor a half-written binary.
//   - Uninstall must remove exactly what install put there, never an admin's file of the
//     same name. Install records what it writes in a manifest (beside the config) before it
//     writes it, the way the registry records a group before mkdir: a killed install leaves
//     files that the manifest still claims. A file at a destination that no manifest claims
//     is refused unless Adopt says to take it over.
//   - Every path the registrations and the manifest hold is the host's; only the file system
//     calls see HostRoot. A symlink on the host is resolved as the host would, an absolute
//     one under HostRoot (securejoin), so no write or removal leads out of it.
//   - A runtime handler that names the wrapper (containerd's BinaryName, CRI-O's
//     runtime_path) cannot exec or stop its containers once the wrapper is gone, and CRI-O
//     does not start with a runtime_path that is missing. Uninstall reads the runtimes'
//     configs first (runtimeconf.go) and removes nothing while one names a file it would
//     remove, or cannot be read.
package hostinstall
