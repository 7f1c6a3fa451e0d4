package stdiotap_test

import (
	"testing"

	"github.com/mcpdrift/mcpdrift/dev/integration/itest"
)

func TestMain(m *testing.M) { itest.Main(m) }
