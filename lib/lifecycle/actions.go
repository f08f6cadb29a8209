package lifecycle

import (
	"errors"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
	"github.com/resctrl-mon/resctrl-mon/lib/vocab"
)

// ActionOf is what a call did, including when it returned an error: a refusal (an identity
// that does not add up, a foreign group, a class conflict), a pod left pending for want of an
// RMID, or a failure. Every front end logs and counts this one value.
func ActionOf(out Outcome, err error) vocab.Action {
	switch {
	case err == nil:
		return out.Action
	case out.Action == vocab.Pending:
		return vocab.Pending
	case errors.Is(err, ErrSpoofed), errors.Is(err, ErrForeign), errors.Is(err, resctrlfs.ErrClassMismatch):
		return vocab.Refused
	}
	return vocab.Failed
}
