module github.com/mcpdrift/mcpdrift/internal/mcpwire

go 1.26.0
