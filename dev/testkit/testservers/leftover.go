package testservers

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// MarkProcesses gives every process the test starts from now on (children,
// their children, whatever group or parent they end up in) an environment
// variable unique to the test, and, when the test is done, fails it for
// each such process still running. Call it before starting anything; the
// test's other cleanups (which stop what it started) run first.
func MarkProcesses(t testing.TB) {
	t.Helper()
	mark := strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	t.Setenv(markEnv, mark)
	t.Cleanup(func() {
		// Killed processes take a moment to go: wait generously.
		deadline := time.Now().Add(30 * time.Second)
		left := Marked(markEnv + "=" + mark)
		for len(left) > 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			left = Marked(markEnv + "=" + mark)
		}
		for _, p := range left {
			t.Errorf("process %s outlived the test", p)
		}
	})
}

const markEnv = "MCPDRIFT_TEST_PROCESS_MARK"

// Marked lists the running processes (zombies are not) whose environment
// holds the entry kv ("NAME=value"), as "pid (command)".
func Marked(kv string) []string {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []string
	for _, dir := range dirs {
		env, err := os.ReadFile(dir + "/environ")
		if err != nil || !hasEntry(env, kv) {
			continue
		}
		stat, err := os.ReadFile(dir + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
		if open < 0 || end < open {
			continue
		}
		if state := strings.Fields(string(stat[end+1:])); len(state) > 0 && state[0] == "Z" {
			continue
		}
		out = append(out, filepath.Base(dir)+" "+string(stat[open:end+1]))
	}
	return out
}

func hasEntry(environ []byte, kv string) bool {
	for _, e := range bytes.Split(environ, []byte{0}) {
		if string(e) == kv {
			return true
		}
	}
	return false
}
