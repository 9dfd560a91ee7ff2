"""The ZooKeeper side: pure znode codecs (``znodes*``), the kazoo session (``session``), error
mapping (``errors``) and the versioned store (``store``)."""
