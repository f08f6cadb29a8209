package config

// RMIDReclaim says what a new pod may do when the kernel has no free RMID and groups of ended
// pods sit out their retention window: in hooks mode every ended pod becomes idle (nothing
// tells a hook that a pod ended), so a tenant churning short pods holds every RMID for the
// window and leaves the next pods unmonitored (or refused under failurePolicy: closed).
type RMIDReclaim string

const (
	// RMIDReclaimIdle (default): the group idle longest (no live container, no running task)
	// ends early, its .end snapshot written, and the new pod gets its RMID.
	RMIDReclaimIdle RMIDReclaim = "idle"
	// RMIDReclaimNone: idle groups keep their RMID for the whole retention window; the new
	// pod waits (pending) for one to end.
	RMIDReclaimNone RMIDReclaim = "none"
)

// validRMIDReclaim reports whether r is a value the key takes.
func validRMIDReclaim(r RMIDReclaim) bool { return r == RMIDReclaimIdle || r == RMIDReclaimNone }
