package lifecycle

import (
	"fmt"
	"strings"
)

func uid(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

func fakeCrio(pod string) map[string]string { return crio(pod, strings.Repeat("c", 64)) }
