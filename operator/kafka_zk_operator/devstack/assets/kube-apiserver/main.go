// Command kube-apiserver is a thin wrapper around the upstream kube-apiserver
// command, so that the real API server can be built from Go modules (the
// upstream module cannot be `go install`ed because of its replace directives).
// It is used only by kafka-zk-operator's local development and test stack.
package main

import (
	"os"
	_ "time/tzdata"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	command := app.NewAPIServerCommand()
	code := cli.Run(command)
	os.Exit(code)
}
