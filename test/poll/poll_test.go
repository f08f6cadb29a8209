package poll_test

import (
	"errors"
	"testing"
	"time"

	"github.com/resctrl-mon/resctrl-mon/test/poll"
)

func TestUntil(t *testing.T) {
	t.Parallel()
	errNotYet := errors.New("not yet")
	for _, tc := range []struct {
		name    string
		okAfter int // calls before f succeeds; -1: never
		wantErr bool
	}{
		{"at once", 0, false},
		{"on the third call", 2, false},
		{"never", -1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			err := poll.Until(200*time.Millisecond, func() error {
				calls++
				if tc.okAfter >= 0 && calls > tc.okAfter {
					return nil
				}
				return errNotYet
			})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error: %v", err, tc.wantErr)
			}
			if tc.wantErr && !errors.Is(err, errNotYet) {
				t.Errorf("err = %v, does not wrap f's last error", err)
			}
			if !tc.wantErr && calls != tc.okAfter+1 {
				t.Errorf("%d calls, want %d", calls, tc.okAfter+1)
			}
		})
	}
}
