package registry

// Container names in a record. A record's file is written by root, but a name in it comes
// from outside: kubelet's CRI request (a Kubernetes container name) as the runtime passed it
// on, or whatever a runtime's client called a container. The exporter puts the name in a
// label value and `status` prints it, so a record keeps only names that are plainly names,
// and one written by an older version (no names at all) still reads.

// MaxContainerName bounds a recorded name: a Kubernetes container name is a DNS label (RFC
// 1123) of at most 63 characters.
const MaxContainerName = 63

// ValidContainerName reports whether s may be recorded as a container's name: 1 to 63
// characters of letters, digits, '-', '_' and '.', starting with a letter or digit. That
// holds every Kubernetes container name (a DNS label) and the names podman and docker
// accept that are not longer, and nothing that needs quoting in a log line, a path or a
// Prometheus query. A container with no name that fits is exported under its id.
func ValidContainerName(s string) bool {
	if s == "" || len(s) > MaxContainerName {
		return false
	}
	for i := range len(s) {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '-' && c != '_' && c != '.') {
			return false
		}
	}
	return true
}

// SetName records a container's name; a name that is not valid, or "", is not recorded
// (and one recorded before is forgotten: the container's id stands for it).
func (r *Record) SetName(id, name string) {
	if !ValidContainerName(name) {
		delete(r.Names, id)
		return
	}
	if r.Names == nil {
		r.Names = map[string]string{}
	}
	r.Names[id] = name
}

// Name is a recorded container's name, or "" when none was recorded.
func (r Record) Name(id string) string { return r.Names[id] }

// cleanNames drops, from a record just read, the names that are not valid or belong to no
// recorded container: a record is read by the exporter at every scrape, and a name that was
// planted or cut short must not reach a label.
func cleanNames(r *Record) {
	for id, n := range r.Names {
		if _, ok := r.Containers[id]; !ok || !ValidContainerName(n) {
			delete(r.Names, id)
		}
	}
	if len(r.Names) == 0 {
		r.Names = nil
	}
}
