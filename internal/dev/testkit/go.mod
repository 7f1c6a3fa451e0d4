module github.com/mcpdrift/mcpdrift/internal/dev/testkit

go 1.26.0
