"""The only package that talks to a cluster: the port (``base``) and its adapters.

``sim`` is the embedded simulator (of any system of ``r2act.systems``). The real adapter is
``kube`` (the Kubernetes side, whose single client-facing module ``kube.api`` is the only
importer of the official ``kubernetes`` client) and ``prometheus`` (the only importer of
``prometheus_api_client``). ``connect`` builds the right adapter from a campaign target.
"""
