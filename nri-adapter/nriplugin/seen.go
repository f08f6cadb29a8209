package nriplugin

import "sync"

// maxSeen bounds seen: past it the set starts over, and the next events take the registry's
// word instead (what they would have done without it).
const maxSeen = 1 << 16

// seen remembers what this adapter did to a container, so that what NRI sends twice costs no
// file of the registry: PostStartContainer after StartContainer placed the container, and
// RemoveContainer after StopContainer's departure (a second departure changes nothing). It
// is only a shortcut: empty (a restart, a Synchronize, a new configuration), every event goes
// to the registry as before. An entry goes with its container's RemoveContainer.
type seen struct {
	mu     sync.Mutex
	placed map[string]bool // placed at StartContainer
	left   map[string]bool // departed at StopContainer
}

func (s *seen) mark(set *map[string]bool, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if *set == nil || len(s.placed)+len(s.left) >= maxSeen {
		s.placed, s.left = map[string]bool{}, map[string]bool{}
	}
	(*set)[id] = true
}

// Placed records a container placed at StartContainer.
func (s *seen) Placed(id string) { s.mark(&s.placed, id) }

// Left records a container that departed at StopContainer.
func (s *seen) Left(id string) { s.mark(&s.left, id) }

// WasPlaced reports whether the container was placed at StartContainer.
func (s *seen) WasPlaced(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.placed[id]
}

// Removed forgets the container and reports whether it had already departed.
func (s *seen) Removed(id string) (departed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	departed = s.left[id]
	delete(s.left, id)
	delete(s.placed, id)
	return departed
}

// Reset forgets everything: the registry is the truth again.
func (s *seen) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.placed, s.left = nil, nil
}
