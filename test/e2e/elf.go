package e2e

import (
	"debug/elf"
	"errors"
	"fmt"
	"strings"
)

// ErrDynamic: the binary needs a dynamic loader or shared libraries, so it cannot run from a
// FROM-scratch image, a busybox rootfs, or a host whose libc differs from the build's.
var ErrDynamic = errors.New("dynamically linked")

// CheckStatic returns nil when the ELF file at path runs without a loader: no program
// interpreter (PT_INTERP) and no shared library it needs (DT_NEEDED). Either one alone
// makes it dynamic: a PT_INTERP is what execve loads first, and a static-pie with
// DT_NEEDED entries still fails where the library is missing.
func CheckStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("read ELF %s: %w", path, err)
	}
	defer func() { _ = f.Close() }()
	var why []string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			interp := make([]byte, p.Filesz)
			if _, err := p.ReadAt(interp, 0); err != nil {
				return fmt.Errorf("read ELF %s: program interpreter: %w", path, err)
			}
			why = append(why, "interpreter "+strings.TrimRight(string(interp), "\x00"))
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return fmt.Errorf("read ELF %s: dynamic section: %w", path, err)
	}
	if len(libs) > 0 {
		why = append(why, "needs "+strings.Join(libs, ", "))
	}
	if len(why) > 0 {
		return fmt.Errorf("%s: %w (%s)", path, ErrDynamic, strings.Join(why, "; "))
	}
	return nil
}
