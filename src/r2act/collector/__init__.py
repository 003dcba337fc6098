"""Collection: runs planned incidents on a Cluster and writes the raw store.

Journalled, resumable, and guaranteed to remove every chaos object it created."""
