package mcpgo_test

import (
	"testing"

	"github.com/mcpdrift/mcpdrift/interceptor/internal/itest"
)

func TestMain(m *testing.M) { itest.Main(m) }
