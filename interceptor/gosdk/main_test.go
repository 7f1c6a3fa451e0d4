package gosdk_test

import (
	"os"
	"testing"

	"github.com/mcpdrift/mcpdrift/interceptor/internal/itest"
)

func TestMain(m *testing.M) {
	itest.ServeChild()
	os.Exit(m.Run())
}
