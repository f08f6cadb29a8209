package aside

import (
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
)

const echoArg = "aside-test-echo"

// The child of these tests is the test binary itself: it sends back its request in capitals.
func TestMain(m *testing.M) {
	IfAsked(echoArg, func(in io.Reader, out io.Writer) int {
		var s string
		if err := json.NewDecoder(in).Decode(&s); err != nil {
			return 2
		}
		_ = json.NewEncoder(out).Encode(strings.ToUpper(s))
		return 0
	})
	askedStuck()
	askedMemLimit()
	os.Exit(m.Run())
}

// A started child gets its request on fd 3, answers on fd 4, runs in a session of its own
// and exits with its function's status.
func TestChildRoundTrip(t *testing.T) {
	t.Parallel()
	c, err := Start("aside-test", echoArg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Send("placed"); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := json.NewDecoder(c.Reply).Decode(&got); err != nil || got != "PLACED" {
		t.Errorf("reply %q, %v; want PLACED", got, err)
	}
	if err := c.Cmd.Wait(); err != nil {
		t.Errorf("child: %v", err)
	}
	if !c.Cmd.SysProcAttr.Setsid {
		t.Error("the child shares the caller's session")
	}
}

// A child whose request never comes (the caller closed it) exits with its own failure,
// never waits forever.
func TestChildWithoutRequest(t *testing.T) {
	t.Parallel()
	c, err := Start("aside-test", echoArg)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Request.Close()
	defer c.Reply.Close()
	if err := c.Cmd.Wait(); err == nil || c.Cmd.ProcessState.ExitCode() != 2 {
		t.Errorf("a child with no request: %v, want exit status 2", err)
	}
}
