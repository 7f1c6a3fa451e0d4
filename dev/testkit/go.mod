module github.com/mcpdrift/mcpdrift/dev/testkit

go 1.26.0
