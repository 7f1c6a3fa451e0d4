package main

import (
	"strings"
	"testing"
)

// --upstream-env names the variable that holds the URL (what wrap writes
// for a URL with credentials in it); a missing variable or both flags are
// usage errors that never print the URL.
func TestProxyUpstreamEnv(t *testing.T) {
	t.Setenv("MCPDRIFT_TEST_UPSTREAM", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy", "--upstream-env", "MCPDRIFT_TEST_UNSET_UPSTREAM"}, "MCPDRIFT_TEST_UNSET_UPSTREAM is not set"},
		{[]string{"proxy", "--upstream-env", "MCPDRIFT_TEST_UPSTREAM"}, "MCPDRIFT_TEST_UPSTREAM is not set"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1/mcp", "--upstream-env", "MCPDRIFT_TEST_UPSTREAM"}, "exclusive"},
	} {
		code, _, errOut := cli(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d %q", tc.args, code, errOut)
		}
	}
}
