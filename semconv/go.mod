module github.com/mcpdrift/mcpdrift/semconv

go 1.26.0
