package proxy_test

import (
	"context"
	"encoding/json"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcpdrift/mcpdrift/dev/integration/proxy/internal/testchild"
	"github.com/mcpdrift/mcpdrift/proxy"
)

func TestMain(m *testing.M) {
	testchild.SetProxy(proxyMain)
	testchild.Main()
	goleak.VerifyTestMain(m)
}

// proxyMain is `mcpdrift proxy -- $MCPDRIFT_PROXY_TEST_SERVER...` (or, with
// MCPDRIFT_PROXY_TEST_UPSTREAM, `mcpdrift proxy --upstream URL`) on this
// process's stdio, for agents that launch the proxy as their server; with
// listenEnv, `mcpdrift proxy --listen` (listenMain).
func proxyMain() int {
	if up := os.Getenv(listenEnv); up != "" {
		return listenMain(up)
	}
	run := proxy.RunCommand
	cfg := proxy.Config{InjectTraceContext: true}
	if cfg.Upstream = os.Getenv("MCPDRIFT_PROXY_TEST_UPSTREAM"); cfg.Upstream != "" {
		run = proxy.RunUpstream
	} else if err := json.Unmarshal([]byte(os.Getenv("MCPDRIFT_PROXY_TEST_SERVER")), &cfg.Command); err != nil {
		return 2
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM) // as the CLI does: forwarded, then the exit status
	code, err := run(context.Background(), cfg, proxy.NoTelemetry(),
		proxy.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Signals: sigs})
	if err != nil {
		return 1
	}
	return code
}
