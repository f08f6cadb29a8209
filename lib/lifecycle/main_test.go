package lifecycle

import (
	"os"
	"runtime"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if os.Getenv("LIFECYCLE_TEST_HELPER") == "threads" {
		// A multi-threaded process, like runc's init: four more OS threads, then wait.
		for range 4 {
			go func() {
				runtime.LockOSThread()
				select {}
			}()
		}
		for {
			time.Sleep(time.Hour)
		}
	}
	os.Exit(m.Run())
}
