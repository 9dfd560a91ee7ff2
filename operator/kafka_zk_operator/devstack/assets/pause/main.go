// Command pause is the local node's pod sandbox process (the role of registry.k8s.io/pause, which
// no registry here serves): PID 1 of every pod's sandbox, it holds the pod's namespaces, reaps
// orphaned children and exits on SIGINT or SIGTERM. Built statically into a one-file image by
// kafka-zk-operator's local stack (`kzo dev up --node`).
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
