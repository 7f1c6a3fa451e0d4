//go:build !unix

package maxprocs

import "time"

// processCPU is not read here: the runtime's default count stands.
func processCPU() (time.Duration, bool) { return 0, false }
