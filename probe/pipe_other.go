//go:build !linux

package probe

import "os"

// unreadBytes cannot tell elsewhere: on BSD-derived systems FIONREAD on a
// pipe's write end does not count what its reader left.
func unreadBytes(*os.File) (int, bool) { return 0, false }
