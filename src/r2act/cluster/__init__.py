"""The only package that talks to a cluster: the port (``base``) and its adapters.

``sim`` is the embedded simulated Online Boutique; ``kube`` and ``prometheus`` wrap the
official Kubernetes client and prometheus-api-client and are the only modules importing them.
"""
