// Package e2e is the harness for end-to-end tests that run real containers with runc, crun and
// podman, whose bundles list OCI hooks (resctrl-mon's hook binary, or a test's own script).
//
// It builds a minimal busybox root filesystem shared by every container of a test binary
// (Rootfs), writes bundles from a default spec fit for this kind of machine (NewBundle), drives
// runc and crun with a private state directory per test so tests can run in parallel
// (NewRuntime), drives podman with private storage (Podman), its pods included (CreatePod),
// and reads the threads in a container's cgroup (CgroupTasks). HookRecorder is a hook that
// records the state each runtime passes on stdin; Capturer runs capturehook, which also keeps
// what the bundle's config.json says of the container's pod and role, at the stages it is
// given (HostStages for all of them), through bundle hooks (runc, crun) or a hooks.d directory
// (podman, CRI-O): lib/identity's fixtures are its records (package capture).
//
// StartCRIO and StartContainerd run a real CRI-O or containerd of the test's own (built by
// test/runtimes/*.sh into a cache, `make runtimes`; RuntimeBins finds them), every path
// private, with TestImage (the rootfs as an image, made with podman: no registry is
// reachable) in its store. Their CRI field drives pods as kubelet would, through crictl
// (RunPod, CreateContainer, Start, Exec, Stop, Remove, StopPod, RemovePod), and everything is
// removed when the test ends. A CRI-O can be stopped (SIGTERM, or SIGKILL for a crash) and
// started again on the same state while its containers run on (StopDaemon, StartDaemon,
// Restart). What CRI-O really sends is captured by a Capturer in its hooks_dir; containerd,
// which runs no hooks.d, shows its specs as bundles (Containerd.BundleSpec).
//
// For the project's own binaries, BuildBinaries builds them once per source tree into a
// directory every test package of a run shares (Binaries), and NewHookEnv gives a test its
// simulator (test/simenv), config, state and log, with the hook listed in bundles it makes
// (HookEnv); NewRecEnv adds a runc whose root the config names, for reconcile. The tests are
// one package per front end beside this one (hook, nri, wrapper, reconcile, exporter,
// sidecar, install, identity, runtimes) and bench (the benchmarks).
//
// Everything here needs root. Where a precondition is missing (not root, a runtime or
// busybox-static not installed, CRI-O or containerd not built) the test is skipped, unless
// RESCTRLSIM_REQUIRE=1 (as in CI), where it fails: a suite that silently skipped would
// prove nothing.
package e2e
