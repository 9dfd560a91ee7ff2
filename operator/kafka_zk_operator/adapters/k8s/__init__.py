"""The Kubernetes side: custom-resource bodies to domain values, status patches, events."""
