"""Kafka's own protocol (not ZooKeeper): what only the brokers know, such as log sizes."""
