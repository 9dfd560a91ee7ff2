"""Long-lived operator state: ZooKeeper sessions per cluster and watch-driven status refresh."""
