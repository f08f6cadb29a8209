package kernel

import (
	"strings"
	"testing"

	"github.com/intel/goresctrl/pkg/monitor"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// podUIDs are keys at the edges of goresctrl's pod UID rules: both forms, either case, one
// digit off, a dash moved, too many parts.
var podUIDs = []string{
	"", "0", "123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-426614174000",
	"123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400", "123e4567-e89b-12d3-a456-4266141740000",
	"123e4567-e89b-12d3-a456_426614174000", "123e4567e-89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-42661417400g",
	"123e4567-e89b-12d3-a4-56-42661417400", "123e4567-e89b-12d3-a456-4266-1417400", "--------------------------------",
	"g23e4567e89b12d3a456426614174000", "ctr-123e4567e89b12d3a456426614174000", "-123e4567-e89b-12d3-a456-42661417400",
	"123e4567-e89b-12d3-a456-4266141740-", "ÿ23e4567-e89b-12d3-a456-42661417400",
}

// The seam's pod UID rules are goresctrl's: a group name the library owns is a key goresctrl
// takes, in the same canonical form, for every input.
func TestPodUIDIsGoresctrls(t *testing.T) {
	t.Parallel()
	for _, s := range podUIDs {
		agree(t, s)
	}
}

func FuzzPodUIDIsGoresctrls(f *testing.F) {
	for _, s := range podUIDs {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { agree(t, s) })
}

func agree(t *testing.T, s string) {
	t.Helper()
	if got, want := resctrlfs.ValidPodUID(s), monitor.PodUIDValidator(s); got != want {
		t.Errorf("ValidPodUID(%q) = %v, goresctrl says %v", s, got, want)
	}
	if got, want := resctrlfs.CanonicalPodUID(s), monitor.CanonicalizePodUID(s); got != want {
		t.Errorf("CanonicalPodUID(%q) = %q, goresctrl says %q", s, got, want)
	}
	if resctrlfs.ValidPodUID(s) && strings.ToLower(s) != s && !resctrlfs.ValidPodUID(resctrlfs.CanonicalPodUID(s)) {
		t.Errorf("CanonicalPodUID(%q) is no pod UID", s)
	}
}
