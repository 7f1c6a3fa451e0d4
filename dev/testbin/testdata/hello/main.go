// Command hello is the main package testbin's test builds.
package main

func main() {}
