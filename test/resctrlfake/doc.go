// Package resctrlfake is resctrl in memory, the one fake of resctrlfs.Groups every package's
// unit tests share: groups with their tasks and a fixed number of RMIDs, allocation classes
// as the kernel keeps them apart, every group's counters read from a fixture tree (testdata/,
// mon_data as the kernel lays it out, the way goresctrl's pkg/monitor keeps its fixtures),
// and counter assignment in mbm_event mode. With it the lifecycle's decisions (placement,
// reclaim, snapshots, the counter policy) run without root or FUSE, with -race, in
// milliseconds. The simulator (test/resctrlsim) stays for what only real file operations
// show: the end-to-end tests, the hook's budget against a kernel that hangs, the tasks files'
// descriptors.
//
// For what happens outside the caller: Mkdir (a group another process made), Remount (every
// group gone), Limbo (freed RMIDs left dirty, so a mkdir finds only EBUSY).
//
// What it models is what the kernel does and its documentation says
// (Documentation/filesystems/resctrl.rst); where it is simpler than the simulator, the
// method says so.
package resctrlfake
