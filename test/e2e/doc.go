// Package e2e is the harness for end-to-end tests that run real containers with runc, crun and
// podman, whose bundles list OCI hooks (resctrl-mon's hook binary, or a test's own script).
//
// It builds a minimal busybox root filesystem shared by every container of a test binary
// (Rootfs), writes bundles from a default spec fit for this kind of machine (NewBundle), drives
// runc and crun with a private state directory per test so tests can run in parallel
// (NewRuntime), drives podman with private storage (Podman), its pods included (CreatePod),
// and reads the threads in a container's cgroup (CgroupTasks). HookRecorder is a hook that
// records the state each runtime passes on stdin; Capturer runs capturehook, which also keeps
// what the bundle's config.json says of the container's pod and role: lib/identity's fixtures
// are its records.
//
// Everything here needs root. Where a precondition is missing (not root, a runtime or
// busybox-static not installed) the test is skipped, unless RESCTRLSIM_REQUIRE=1 (as in CI),
// where it fails: a suite that silently skipped would prove nothing.
package e2e
