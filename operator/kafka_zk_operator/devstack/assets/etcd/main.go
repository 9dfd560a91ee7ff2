// Command etcd is a thin wrapper around etcd's server entry point, so that a
// real etcd can be built from Go modules for kafka-zk-operator's local stack.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
