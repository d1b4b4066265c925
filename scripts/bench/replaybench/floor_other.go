//go:build !linux

package main

import "fmt"

func floor([]string) error      { return fmt.Errorf("floor runs on Linux only") }
func uringFloor([]string) error { return fmt.Errorf("uring runs on Linux only") }
