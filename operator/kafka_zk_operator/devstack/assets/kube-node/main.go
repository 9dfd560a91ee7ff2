// Command kube-node is one binary holding the upstream node and control-loop commands the local
// stack's real node needs (kubelet, kube-controller-manager, kube-scheduler, kube-proxy), built
// from Go modules like kube-apiserver (the upstream module cannot be `go install`ed because of its
// replace directives). One binary links the shared packages once: `kube-node kubelet --config ...`.
// It is used only by kafka-zk-operator's local development and test stack (`kzo dev up --node`).
package main

import (
	"fmt"
	"os"
	_ "time/tzdata"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	commands := map[string]func() *cobra.Command{
		"kubelet":                 kubelet.NewKubeletCommand,
		"kube-controller-manager": controllermanager.NewControllerManagerCommand,
		"kube-scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
		"kube-proxy":              proxy.NewProxyCommand,
	}
	if len(os.Args) < 2 || commands[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: kube-node kubelet|kube-controller-manager|kube-scheduler|kube-proxy [flags]")
		os.Exit(2)
	}
	command := commands[os.Args[1]]()
	os.Args = append([]string{os.Args[1]}, os.Args[2:]...)
	os.Exit(cli.Run(command))
}
