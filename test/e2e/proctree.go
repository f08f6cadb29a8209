package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// TreeTasks returns every thread of process pid and of all its descendants, from
// /proc/<pid>/task/<tid>/children (a child is listed under the thread that forked it). A
// process that exits meanwhile is skipped: the caller counts what is there.
func TreeTasks(pid int) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		es, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", p))
		if err != nil {
			if p == pid {
				return nil, fmt.Errorf("tasks of %d: %w", pid, err)
			}
			continue
		}
		for _, e := range es {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			out = append(out, tid)
			b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "task", e.Name(), "children"))
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					queue = append(queue, c)
				}
			}
		}
	}
	return out, nil
}
