package registry

import (
	"fmt"
	"strings"
)

// maxContainerID bounds an id: runc's are 64 hex digits, and a file name has 255 bytes.
const maxContainerID = 200

// checkContainerID refuses an id that is not one plain name in the bindings directory. Ids
// come from the runtime or over NRI: "..", a slash or a NUL would make a binding's path name
// another file of the state dir (unlinking a pod's lock, reading a record as a binding), and a
// leading dot is kept for the directory's own temporary files.
func checkContainerID(id string) error {
	if id == "" || len(id) > maxContainerID || strings.ContainsAny(id, "/\x00") || strings.HasPrefix(id, ".") {
		return fmt.Errorf("%q is not a container id (1-%d bytes, no '/', no NUL, no leading '.')", id, maxContainerID)
	}
	return nil
}
