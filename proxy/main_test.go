package proxy_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/mcpdrift/mcpdrift/proxy/internal/testchild"
)

func TestMain(m *testing.M) {
	testchild.Main()
	goleak.VerifyTestMain(m)
}
