package lifecycle

import "time"

// staleTempAge is how old a temporary file of the state dir must be for the sweep to take it
// for one a killed writer left: far beyond any write (a rename follows within microseconds,
// a hook ends within its budget), so a live writer's file is never removed under it.
const staleTempAge = 10 * time.Minute
