package identity

import (
	"errors"
	"strings"
	"testing"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

func TestFromPodSandbox(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		in      PodSandbox
		want    Identity
		wantErr error
	}{
		"pod": {PodSandbox{ID: sb, UID: uid, Namespace: "default", Name: "web"},
			Identity{Runtime: NRI, PodUID: uid, SandboxID: sb, Namespace: "default", PodName: "web"}, nil},
		"compact uppercase uid is canonicalised": {PodSandbox{ID: sb, UID: "0F8B2C1E111122223333444455556666"},
			Identity{Runtime: NRI, PodUID: uid, SandboxID: sb}, nil},
		"no uid":               {PodSandbox{ID: sb, Name: "web"}, Identity{}, ErrMismatch},
		"uid not a uid":        {PodSandbox{ID: sb, UID: "../../etc"}, Identity{}, ErrBadAnnotation},
		"no sandbox id":        {PodSandbox{UID: uid}, Identity{}, ErrBadAnnotation},
		"short sandbox id":     {PodSandbox{ID: "abc", UID: uid}, Identity{}, ErrBadAnnotation},
		"uppercase sandbox id": {PodSandbox{ID: strings.ToUpper(sb), UID: uid}, Identity{}, ErrBadAnnotation},
		"bad namespace":        {PodSandbox{ID: sb, UID: uid, Namespace: "Default"}, Identity{}, ErrBadAnnotation},
		"bad name":             {PodSandbox{ID: sb, UID: uid, Name: "web/x"}, Identity{}, ErrBadAnnotation},
	} {
		got, err := FromPodSandbox(tc.in)
		if !errors.Is(err, tc.wantErr) || (tc.wantErr != nil) != (err != nil) || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v, %v", name, got, err, tc.want, tc.wantErr)
		}
	}
}

// Whatever a runtime sends, an accepted pod names a group by its canonical UID and a valid
// sandbox id, and a refused one says why with a sentinel.
func FuzzFromPodSandbox(f *testing.F) {
	f.Add(sb, uid, "default", "web")
	f.Add(sb, "0F8B2C1E111122223333444455556666", "", "")
	f.Add("", "", "", "")
	f.Add(sb, uid, "a\x00b", "..")
	f.Fuzz(func(t *testing.T, id, podUID, ns, name string) {
		got, err := FromPodSandbox(PodSandbox{ID: id, UID: podUID, Namespace: ns, Name: name})
		if err != nil {
			if !errors.Is(err, ErrMismatch) && !errors.Is(err, ErrBadAnnotation) {
				t.Fatalf("error without a sentinel: %v", err)
			}
			return
		}
		if got.PodUID != resctrlfs.CanonicalPodUID(podUID) || !resctrlfs.ValidPodUID(got.PodUID) || strings.ToLower(got.PodUID) != got.PodUID {
			t.Fatalf("pod UID %q from %q is not canonical", got.PodUID, podUID)
		}
		if !IsSandboxID(got.SandboxID) || got.Sandbox || got.Runtime != NRI {
			t.Fatalf("accepted %+v", got)
		}
		if (ns != "" && !isName(ns)) || (name != "" && !isName(name)) {
			t.Fatalf("accepted namespace %q, name %q", ns, name)
		}
	})
}
